// A real producer and a real worker process log in one format: every line either process writes
// is a JSON object with `level` as a name and `time` in ISO 8601 UTC (the only other line is the
// producer's loud banner when authentication is off). With the embedded server's kind of
// connection string (password = user name = `postgres`), harmless words stay readable: the queue
// backend's name is not masked, while the password inside a connection string still is.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../packages/ledger/src/index';
import { type TestDb, testDb, waitFor } from './support/db';
import { type Proc, queueConfigFor, spawnProcess, spawnWorker, stackEnv } from './support/stack';

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'];
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const BANNER = '*** RUNLEDGER PRODUCER: AUTHENTICATION IS OFF';

let db: TestDb;
let producer: Proc;
let worker: Proc;

/** The test database's URL as the embedded server's looks: user, password and database alike. */
function embeddedLike(url: string): string {
  const u = new URL(url);
  u.username = 'postgres';
  u.password = 'postgres';
  return u.toString();
}

beforeAll(async () => {
  db = await testDb('log_format');
  const q = queueConfigFor('postgres', db.url, db.schema, null);
  const port = await freePort();
  const env = stackEnv({ ...q, databaseUrl: embeddedLike(db.url) }, embeddedLike(db.url), db.schema, {
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'debug',
  });
  producer = spawnProcess('apps/producer/src/main.ts', env);
  worker = spawnWorker(env, 'log-format-worker');
  const base = `http://127.0.0.1:${port}`;
  await waitFor('producer to answer', async () => (await fetch(`${base}/healthz`).catch(() => undefined))?.ok, 120_000).catch((err: Error) => {
    throw new Error(`${err.message}\nproducer:\n${producer.output()}`);
  });
  const res = await fetch(`${base}/v1/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ graph: 'echo', input: {} }),
  });
  const { jobId } = (await res.json()) as { jobId: string };
  await waitFor('the job to complete', async () => (await db.ledger.get(jobId)).status === 'completed', 60_000);
});
afterAll(async () => {
  producer?.kill('SIGKILL');
  worker?.kill('SIGKILL');
  await Promise.all([producer?.exited, worker?.exited]);
  await db?.close();
});

/** Each line of a process's output, parsed when it is JSON. */
function lines(p: Proc): Array<{ text: string; json: Record<string, unknown> | null }> {
  return p
    .output()
    .split('\n')
    .filter((t) => t.trim() !== '' && !t.startsWith(BANNER))
    .map((text) => {
      try {
        return { text, json: JSON.parse(text) as Record<string, unknown> };
      } catch {
        return { text, json: null };
      }
    });
}

describe('producer and worker logs', () => {
  it('are JSON lines with the level as a name and the time in ISO 8601 UTC, in both processes', () => {
    for (const [name, p] of [
      ['producer', producer],
      ['worker', worker],
    ] as const) {
      const all = lines(p);
      expect(all.length, `${name} logged nothing`).toBeGreaterThan(0);
      for (const { text, json } of all) {
        expect(json, `${name}: not a JSON line: ${text}`).not.toBeNull();
        expect(LEVELS, `${name}: ${text}`).toContain(json?.level);
        expect(String(json?.time), `${name}: ${text}`).toMatch(ISO_UTC);
      }
    }
  });

  it('mask secrets only: the queue backend is named, not "[redacted]"', () => {
    const text = `${producer.output()}\n${worker.output()}`;
    expect(text).toContain('queue backend postgres');
    expect(text).not.toContain('postgres:postgres@');
  });
});
