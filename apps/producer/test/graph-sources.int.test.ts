// Which graphs a deployment serves: with a langgraph.json only its own (the built-in demo graphs
// come only when RUNLEDGER_BUILTIN_GRAPHS asks for them), and one id given by two sources stops
// producer and worker at start-up with a line naming both.
import path from 'node:path';
import { Client } from '@langchain/langgraph-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorker } from '../../../apps/worker/src/index';
import { loadGraphs } from '../../../packages/runtime/src/index';
import { type TestDb, testDb } from '../../../test/support/db';
import '../../../test/support/provided';
import { createServer } from '../src/index';

const config = path.join(import.meta.dirname, 'fixtures/own-graphs/langgraph.json');

describe('graph sources', () => {
  let db: TestDb;
  let env: Record<string, string>;
  beforeAll(async () => {
    db = await testDb('graph_sources');
    env = { DB_SCHEMA: db.schema, QUEUE_BACKEND: 'postgres', METRICS_PORT: '0', LOG_LEVEL: 'silent' };
  });
  afterAll(() => db?.close());

  it('a project with its own langgraph.json gets only its own graphs', async () => {
    const server = await createServer({ config, databaseUrl: db.url, port: 0, env });
    try {
      const apiUrl = await server.listen();
      const assistants = await new Client({ apiUrl }).assistants.search({ limit: 100 });
      expect(assistants.map((a) => a.graph_id).sort()).toEqual(['approval', 'triage']);
      const demo = await fetch(`${apiUrl}/v1/jobs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ graph: 'vacation', input: {} }),
      });
      expect(demo.status).toBe(422);
      expect(((await demo.json()) as { error: { message: string } }).error.message).toContain('vacation');
    } finally {
      await server.close();
    }
  });

  it('the built-in graphs asked for beside it: the clash stops producer and worker, naming both sources', async () => {
    const both = { ...env, RUNLEDGER_BUILTIN_GRAPHS: '1' };
    const clash = `graph "approval" is given by two sources, the built-in demo graphs (RUNLEDGER_BUILTIN_GRAPHS) and ${config}: rename one of them.`;
    await expect(createServer({ config, databaseUrl: db.url, port: 0, env: both })).rejects.toThrow(clash);
    const worker = createWorker({ config, databaseUrl: db.url, env: both, handleSignals: false });
    await expect(worker.run()).rejects.toThrow(clash);
    expect((await db.ledger.pool.query('SELECT count(*)::int AS n FROM workers')).rows[0].n).toBe(0);
  });

  it('the built-in graphs are served alone without a project, and beside one when asked for', async () => {
    expect([...(await loadGraphs({ env: {} })).keys()]).toEqual(['echo', 'vacation', 'approval', 'chat']);
    const extra = [{ name: 'mine', description: 'given in code', build: () => ({}) as never }];
    expect([...(await loadGraphs({ extra })).keys()]).toEqual(['mine']);
    expect([...(await loadGraphs({ extra, builtIns: true })).keys()]).toEqual(['echo', 'vacation', 'approval', 'chat', 'mine']);
  });
});
