// A graph written for LangGraph Platform takes `getLogger()` from `@langchain/langgraph-sdk/logging`
// when its module loads: the producer process starts with it, and the line it logs from a node
// shows up in the worker's log as one JSON line with the run's job and thread ids and the node.
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort } from '../../../packages/ledger/src/index';
import { type TestDb, testDb, waitFor } from '../../../test/support/db';
import { type Proc, queueConfigFor, spawnProcess, spawnWorker, stackEnv } from '../../../test/support/stack';

const config = path.join(import.meta.dirname, 'fixtures/platform-logger/langgraph.json');

let db: TestDb;
let producer: Proc;
let worker: Proc;
let base: string;

beforeAll(async () => {
  db = await testDb('platform_logger');
  const port = await freePort();
  const env = stackEnv(queueConfigFor('postgres', db.url, db.schema, null), db.url, db.schema, {
    PORT: String(port),
    HOST: '127.0.0.1',
    RUNLEDGER_CONFIG: config,
  });
  producer = spawnProcess('apps/producer/src/main.ts', env);
  worker = spawnWorker(env, 'platform-logger');
  base = `http://127.0.0.1:${port}`;
  await waitFor('the producer to answer', async () => (await fetch(`${base}/healthz`).catch(() => undefined))?.ok || producer.child.exitCode !== null, 120_000);
}, 150_000);
afterAll(async () => {
  producer?.kill('SIGKILL');
  worker?.kill('SIGKILL');
  await Promise.all([producer?.exited, worker?.exited]);
  await db?.close();
});

it("a getLogger() graph loads in the producer, and its line is in the worker's log with run, thread and node", { timeout: 120_000 }, async () => {
  expect(producer.child.exitCode, producer.output()).toBeNull();
  const res = await fetch(`${base}/v1/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ graph: 'logged', input: {} }),
  });
  expect(res.status).toBe(202);
  const { jobId, threadId } = (await res.json()) as { jobId: string; threadId: string };
  await waitFor('the job to complete', async () => (await db.ledger.get(jobId)).status === 'completed', 60_000);
  const lines = worker
    .output()
    .split('\n')
    .filter((l) => l.includes('Hello, world!'));
  expect(lines, worker.output()).toHaveLength(1);
  expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'warn', msg: 'Hello, world!', random: 123, node: 'greet', jobId, threadId, service: 'worker' });
});
