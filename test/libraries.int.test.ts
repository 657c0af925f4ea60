// The producer and the worker as libraries, the way a team embeds them in processes of its own:
// createServer and createWorker, configured with options (a langgraph.json, the database, an
// extra GraphDefinition) instead of the environment. A job submitted with the client SDK over
// HTTP runs on the worker; stop() drains and closes.
import path from 'node:path';
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createServer, type ProducerServer } from '../apps/producer/src/index';
import { createWorker, type WorkerProcess } from '../apps/worker/src/index';
import { RunledgerClient } from '../packages/client/src/index';
import type { GraphDefinition } from '../packages/runtime/src/index';
import { type TestDb, testDb } from './support/db';
import './support/provided';

const config = path.join(import.meta.dirname, '../apps/worker/test/fixtures/langgraph-project/langgraph.json');

const State = Annotation.Root({ n: Annotation<number>, doubled: Annotation<number | undefined> });
/** A GraphDefinition handed to both libraries beside the config's graphs. */
const double: GraphDefinition = {
  name: 'double',
  description: 'doubles n',
  validateInput: (input) => (typeof (input as { n?: unknown })?.n === 'number' ? undefined : 'double input: n must be a number'),
  build: (checkpointer) =>
    new StateGraph(State)
      .addNode('double', (s) => ({ doubled: s.n * 2 }))
      .addEdge(START, 'double')
      .addEdge('double', END)
      .compile({ checkpointer }),
};

let db: TestDb;
let server: ProducerServer;
let worker: WorkerProcess;
let client: RunledgerClient;

beforeAll(async () => {
  db = await testDb('libraries');
  const env = { DB_SCHEMA: db.schema, QUEUE_BACKEND: 'postgres', METRICS_PORT: '0', LOG_LEVEL: 'silent', LEASE_TTL_MS: '2000' };
  server = await createServer({ config, graphs: [double], databaseUrl: db.url, port: 0, env });
  const address = await server.listen();
  worker = createWorker({ config, graphs: [double], databaseUrl: db.url, concurrency: 2, env, handleSignals: false });
  await worker.run();
  client = new RunledgerClient({ baseUrl: address });
});
afterAll(async () => {
  await worker?.stop();
  await server?.close();
  await db?.close();
});

it('serves the langgraph.json graphs and the GraphDefinitions given as options', async () => {
  const fromConfig = await client.submit({ graph: 'zod', input: { question: 'what is Runledger?' } });
  const given = await client.submit({ graph: 'double', input: { n: 21 } });
  expect((await client.wait(fromConfig.jobId, { timeoutMs: 30_000, pollMs: 100 })).result).toMatchObject({ answer: 'you asked: what is Runledger?' });
  expect((await client.wait(given.jobId, { timeoutMs: 30_000, pollMs: 100 })).result).toMatchObject({ doubled: 42 });
  await expect(client.submit({ graph: 'double', input: { n: 'x' } })).rejects.toThrow('double input: n must be a number');
});

it('refuses bad settings with one line naming them, before opening anything', async () => {
  await expect(createWorker({ databaseUrl: 'not a url', env: {} }).run()).rejects.toThrow(/^bad configuration: DATABASE_URL: must be a postgres:\/\/ URL/);
  await expect(createServer({ env: {} })).rejects.toThrow(/DATABASE_URL/);
});
