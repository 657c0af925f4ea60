// A team's own LangGraph project served from its langgraph.json (RUNLEDGER_CONFIG): each export
// form (compiled with its own MemorySaver, uncompiled StateGraph, async factory) runs on a real
// worker process, resumes on another after a SIGKILL mid-run, and answers the thread-state route;
// input is checked at admission; a bad entry stops start-up with one line naming it.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../../apps/producer/src/app';
import { openQueue } from '../../../packages/queue/src/index';
import { loadGraphs } from '../../../packages/runtime/src/index';
import { type TestDb, testDb } from '../../../test/support/db';
import { nodeEntries, processRegistry, queueConfigFor, spawnWorker, stackEnv, submit, waitForEvent, waitForStatus } from '../../../test/support/stack';
import '../../../test/support/provided';

const project = path.join(import.meta.dirname, 'fixtures/langgraph-project');
const config = path.join(project, 'langgraph.json');
const FORMS = ['compiled', 'uncompiled', 'factory'] as const;

describe('langgraph.json graphs', { timeout: 150_000 }, () => {
  let db: TestDb;
  let env: NodeJS.ProcessEnv;
  let q: ReturnType<typeof queueConfigFor>;
  let app: ReturnType<typeof buildApp>;
  let queue: ReturnType<typeof openQueue>;
  const procs = processRegistry();

  beforeAll(async () => {
    db = await testDb('langgraph_config');
    q = queueConfigFor('postgres', db.url, db.schema, null);
    env = stackEnv(q, db.url, db.schema, { LEASE_TTL_MS: '1500', SWEEP_INTERVAL_MS: '250', RUNLEDGER_CONFIG: config });
    queue = openQueue(q);
    app = buildApp({ ledger: db.ledger, queue, graphs: await loadGraphs({ configPath: config, env: {}, notice: () => {} }), schema: db.schema });
    await app.ready();
  });
  afterEach((ctx) => procs.cleanup(ctx));
  afterAll(async () => {
    await app?.close();
    await queue?.close();
    await db?.close();
  });

  it('runs every export form, resumes each after a SIGKILL mid-run, and serves its state', async () => {
    const a = procs.add(spawnWorker(env, 'lg-a'));
    const jobs = await Promise.all(FORMS.map((graph) => submit(db.ledger, q, { graph, input: { sleepMs: 60_000 } })));
    for (const job of jobs) await waitForEvent(db.ledger, job.jobId, 'second entered', (e) => e.type === 'node_entered' && e.detail.node === 'second', 60_000);
    a.kill('SIGKILL');
    await a.exited;
    expect(a.output()).toContain('graph \\"compiled\\" (./src/graphs.ts:compiled) was compiled with its own checkpointer');
    procs.add(spawnWorker(env, 'lg-b'));
    for (const [i, job] of jobs.entries()) {
      const done = await waitForStatus(db.ledger, job.jobId, ['completed', 'failed'], 90_000);
      expect(done.status, FORMS[i]).toBe('completed');
      expect(done.result).toMatchObject({ log: ['first', 'second'], greeting: 'hello from langgraph.json' });
      expect((await db.ledger.events(job.jobId)).map((e) => e.type)).toContain('resumed');
      // `first` finished before the kill and is not re-entered; `second` was in flight.
      expect(await nodeEntries(db.ledger, job.jobId)).toEqual({ first: 1, second: 2 });
      const state = await app.inject({ method: 'GET', url: `/v1/threads/${job.threadId}/state` });
      expect(state.statusCode, state.body).toBe(200);
      expect(state.json()).toMatchObject({ graph: FORMS[i], values: { log: ['first', 'second'] }, next: [] });
    }
    // The graph compiled with a MemorySaver still checkpointed durably, fenced, in PostgreSQL.
    const compiledJob = jobs[0]!;
    const rows = await db.ledger.pool.query('SELECT count(*)::int AS n FROM checkpoints WHERE thread_id = $1', [compiledJob.threadId]);
    expect(rows.rows[0].n).toBeGreaterThan(2);
    expect((await db.ledger.get(compiledJob.jobId)).firstCheckpointAt).not.toBeNull();
    // `checkpointed` is written by the fenced saver itself, in the transaction of the job's first checkpoint.
    expect((await db.ledger.events(compiledJob.jobId)).map((e) => e.type)).toContain('checkpointed');
    const factoryJob = jobs[2]!;
    expect((await db.ledger.get(factoryJob.jobId)).result).toMatchObject({ builtFor: factoryJob.threadId });
  });

  it('checks input against the graph state at admission', async () => {
    const post = (graph: string, input: unknown) => app.inject({ method: 'POST', url: '/v1/jobs', payload: { graph, input } });
    const unknownField = await post('uncompiled', { sleepMs: 1, colour: 'red' });
    expect(unknownField.statusCode, unknownField.body).toBe(422);
    expect(unknownField.json().error.message).toContain("unknown field(s) colour; the graph's input fields are sleepMs, log, greeting, builtFor");
    expect((await post('compiled', 'hello')).statusCode).toBe(422);
    expect((await post('factory', [1])).statusCode).toBe(422);
    const wrongType = await post('zod', { question: 42 });
    expect(wrongType.statusCode, wrongType.body).toBe(422);
    expect(wrongType.json().error.message).toMatch(/^zod input: question: .*string/i);
    expect((await post('zod', { question: 'why?' })).statusCode).toBe(202);
    expect((await post('compiled', { sleepMs: 1 })).statusCode).toBe(202);
  });

  describe('a bad entry stops start-up with one line naming it', () => {
    const badConfig = (spec: string) => {
      const dir = mkdtempSync(path.join(tmpdir(), 'runledger-lg-'));
      writeFileSync(path.join(dir, 'langgraph.json'), JSON.stringify({ graphs: { broken: spec } }));
      return path.join(dir, 'langgraph.json');
    };
    const graphs = path.join(project, 'src/graphs.ts');
    it.each([
      ['missing file', './nowhere.ts:graph', /^langgraph.json graph "broken" \(\.\/nowhere\.ts:graph\): file \/.*\/nowhere\.ts does not exist\.$/],
      ['missing export', `${graphs}:nope`, /^langgraph.json graph "broken" \(.*:nope\): .*graphs\.ts has no export "nope" \(it exports: .*compiled.*\)\.$/],
      ['not a graph', `${graphs}:notAGraph`, /^langgraph.json graph "broken" \(.*\): export "notAGraph" is not a graph: expected .* \(got number\)\.$/],
    ])('%s', async (_what, spec, message) => {
      const error = await loadGraphs({ configPath: badConfig(spec), env: {} }).catch((e: Error) => e);
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toMatch(message);
    });

    it('the worker process exits 2 with that line', async () => {
      const w = procs.add(spawnWorker({ ...env, RUNLEDGER_CONFIG: badConfig(`${graphs}:notAGraph`) }, 'lg-bad'));
      expect(await w.exited).toBe(2);
      expect(w.output().trim().split('\n')).toEqual([expect.stringMatching(/^runledger worker: langgraph.json graph "broken" .* is not a graph/)]);
    });
  });
});
