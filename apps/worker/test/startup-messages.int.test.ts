// What a process says when it cannot start: an unmigrated DB_SCHEMA names the command to run (not
// `relation "workers" does not exist`), a Redis that does not answer is one line, retried with
// backoff and then a non-zero exit (not a stack and a stream of warnings while it keeps running),
// and every start-up error line has one prefix style: `runledger <process>: `.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { LinkProxy } from '../../../chaos/proxy';
import { freePort } from '../../../packages/ledger/src/index';
import { type TestDb, testDb, waitFor } from '../../../test/support/db';
import { queueConfigFor, spawnProcess, spawnWorker, stackEnv } from '../../../test/support/stack';
import '../../../test/support/provided';

const NOT_MIGRATED = (schema: string) =>
  `Schema "${schema}" is not migrated: run \`npx runledger migrate\` (\`npm run migrate\` in the repository) with the same DATABASE_URL and DB_SCHEMA, then start again.`;
const lines = (text: string) => text.trimEnd().split('\n');

describe('start-up messages', { timeout: 120_000 }, () => {
  let db: TestDb;
  beforeAll(async () => {
    db = await testDb('startup_messages');
  });
  afterAll(() => db?.close());

  it('an unmigrated schema: worker and producer exit 1 with one line naming the command', async () => {
    const schema = `never_migrated_${Date.now()}`;
    const env = stackEnv(queueConfigFor('postgres', db.url, schema, null), db.url, schema, { PORT: String(await freePort()) });
    const worker = spawnWorker(env, 'unmigrated');
    const producer = spawnProcess('apps/producer/src/main.ts', env);
    expect(await worker.exited).toBe(1);
    expect(lines(worker.output())).toEqual([`runledger worker: could not start: ${NOT_MIGRATED(schema)}`]);
    expect(await producer.exited).toBe(1);
    expect(lines(producer.output()).at(-1)).toBe(`runledger producer: ${NOT_MIGRATED(schema)}`);
    expect(producer.output()).not.toContain('does not exist');
  });

  it('Redis that never answers: one warning, then exit 1 with one line, no stack', async () => {
    const port = await freePort();
    const env = stackEnv(queueConfigFor('redis', db.url, db.schema, `redis://127.0.0.1:${port}`), db.url, db.schema, { REDIS_STARTUP_WAIT_MS: '3000' });
    const worker = spawnWorker(env, 'no-redis');
    expect(await worker.exited).toBe(1);
    const exitedAt = Date.now();
    const out = lines(worker.output());
    expect(out, worker.output()).toHaveLength(2);
    // Bounded: the exit follows the first failed try by the 3 s wait (plus one try's timeout and a loaded machine's slack).
    expect(exitedAt - Date.parse(JSON.parse(out[0]!).time)).toBeLessThan(12_000);
    expect(JSON.parse(out[0]!)).toMatchObject({
      level: 'warn',
      msg: expect.stringMatching(`^Redis at 127.0.0.1:${port} is unreachable \\(.*ECONNREFUSED.*\\); retrying for up to 3 s$`),
    });
    expect(out[1]).toMatch(
      new RegExp(`^runledger worker: could not start: Redis at 127.0.0.1:${port} did not answer within 3 s \\(.*\\): start it, or fix REDIS_URL\\.$`),
    );
    expect(worker.output()).not.toMatch(/^\s+at /m);
  });

  it.runIf(inject('redisUrl'))('Redis that answers after a while: the worker retries and starts', async () => {
    const proxy = await LinkProxy.start(Number(new URL(inject('redisUrl') as string).port || 6379));
    proxy.partition('both');
    const env = stackEnv(queueConfigFor('redis', db.url, db.schema, `redis://127.0.0.1:${proxy.port}`), db.url, db.schema, { REDIS_STARTUP_WAIT_MS: '60000' });
    const worker = spawnWorker(env, 'late-redis');
    try {
      await waitFor('the retry warning', async () => worker.output().includes('is unreachable'), 60_000, 100);
      proxy.heal();
      await waitFor('the worker to start', async () => worker.output().includes('"worker started"') || worker.child.exitCode !== null, 60_000, 100);
      expect(worker.output().match(/is unreachable/g)).toHaveLength(1);
      expect(worker.output()).toContain('"worker started"');
    } finally {
      worker.kill('SIGKILL');
      await worker.exited;
      await proxy.close();
    }
  });
});
