// Retention: pruneFinishedThreads removes checkpoints, blobs and writes (all, or all but the latest
// checkpoint) only of threads whose every job is terminal and older than the cutoff, keeps every
// job row, effect and event (events leave by day partitions: scale-migration.int.test.ts), and
// reports counts.
import { Annotation, START, StateGraph } from '@langchain/langgraph';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDb, testDb } from '../../../test/support/db';
import { type JobStatus, langGraphThreadId, pruneFinishedThreads } from '../src/index';
import { jobIn } from './support/jobs';

let db: TestDb;
let saver: PostgresSaver;
beforeAll(async () => {
  db = await testDb('retention');
  saver = new PostgresSaver(db.ledger.pool, undefined, { schema: db.schema });
});
afterAll(() => db.close());

const State = Annotation.Root({ n: Annotation<number>({ reducer: (_a, b) => b, default: () => 0 }) });
/** Writes real LangGraph checkpoints, blobs and pending writes for `threadId`. */
async function runGraph(threadId: string): Promise<void> {
  const graph = new StateGraph(State)
    .addNode('a', (s) => ({ n: s.n + 1 }))
    .addEdge(START, 'a')
    .compile({ checkpointer: saver });
  await graph.invoke({ n: 1 }, { configurable: { thread_id: threadId }, durability: 'sync' });
}

/** A job of `threadId` in `status`, finished `daysAgo` days ago when terminal, with checkpoints on its thread. */
async function job(threadId: string, status: JobStatus, daysAgo = 0): Promise<string> {
  const { job } = await jobIn(db.ledger, status, { threadId });
  await runGraph(threadId);
  if (daysAgo > 0) await db.ledger.pool.query(`UPDATE jobs SET completed_at = now() - make_interval(days => $2) WHERE job_id = $1`, [job.jobId, daysAgo]);
  return job.jobId;
}

const counts = async (threadId: string) => {
  const q = (text: string) => db.ledger.pool.query(text, [threadId]).then((r) => Number(r.rows[0].count));
  return {
    checkpoints: await q('SELECT count(*) FROM checkpoints WHERE thread_id = $1'),
    blobs: await q('SELECT count(*) FROM checkpoint_blobs WHERE thread_id = $1'),
    writes: await q('SELECT count(*) FROM checkpoint_writes WHERE thread_id = $1'),
    events: await q('SELECT count(*) FROM job_events e JOIN jobs j USING (job_id) WHERE j.thread_id = $1'),
    jobs: await q('SELECT count(*) FROM jobs WHERE thread_id = $1'),
  };
};

describe('pruneFinishedThreads', () => {
  it('prunes only threads whose every job is terminal and old, keeping job rows and reporting counts', async () => {
    const old = [await job('t-old', 'completed', 10), await job('t-old', 'failed', 9), await job('t-old', 'cancelled', 12)];
    await job('t-open', 'completed', 10);
    await job('t-open', 'manual_reconcile');
    await job('t-recent', 'completed', 10);
    await job('t-recent', 'completed', 1);
    await job('t-running', 'completed', 10);
    await job('t-running', 'running');
    const before = await counts('t-old');
    expect(before.checkpoints).toBeGreaterThan(0);
    expect(before.blobs).toBeGreaterThan(0);
    expect(before.writes).toBeGreaterThan(0);
    const untouched = { open: await counts('t-open'), recent: await counts('t-recent'), running: await counts('t-running') };

    const report = await pruneFinishedThreads(db.ledger.pool, { olderThanDays: 7, batchSize: 2 });

    expect(report).toEqual({
      threads: 1,
      jobs: 3,
      checkpoints: before.checkpoints,
      checkpointBlobs: before.blobs,
      checkpointWrites: before.writes,
      eventPartitions: 0,
      jobEvents: 0,
      complete: true,
    });
    expect(await counts('t-old')).toEqual({ checkpoints: 0, blobs: 0, writes: 0, events: before.events, jobs: 3 });
    expect(await Promise.all(old.map(async (id) => (await db.ledger.get(id)).status))).toEqual(['completed', 'failed', 'cancelled']);
    const pruned = await db.ledger.pool.query('SELECT count(*) FROM jobs WHERE thread_id = $1 AND pruned_at IS NOT NULL', ['t-old']);
    expect(Number(pruned.rows[0].count)).toBe(3);
    expect({ open: await counts('t-open'), recent: await counts('t-recent'), running: await counts('t-running') }).toEqual(untouched);
  });

  it("prunes a tenant's finished thread under its own LangGraph thread id, whatever another tenant does with the same id", async () => {
    const done = await jobIn(db.ledger, 'completed', { tenant: 'acme', threadId: 't-both' });
    await runGraph(langGraphThreadId('acme', 't-both'));
    await db.ledger.pool.query('UPDATE jobs SET completed_at = now() - make_interval(days => 10) WHERE job_id = $1', [done.job.jobId]);
    await jobIn(db.ledger, 'running', { tenant: 'globex', threadId: 't-both' });
    await runGraph(langGraphThreadId('globex', 't-both'));
    const globex = await counts(langGraphThreadId('globex', 't-both'));
    expect((await counts(langGraphThreadId('acme', 't-both'))).checkpoints).toBeGreaterThan(0);

    expect(await pruneFinishedThreads(db.ledger.pool, { olderThanDays: 7 })).toMatchObject({ threads: 1, jobs: 1 });
    expect(await counts(langGraphThreadId('acme', 't-both'))).toMatchObject({ checkpoints: 0, blobs: 0, writes: 0 });
    expect(await counts(langGraphThreadId('globex', 't-both'))).toEqual(globex);
  });

  it("with checkpoints 'last' keeps the latest checkpoint and what it refers to, so the thread's final state still reads", async () => {
    await job('t-last', 'completed', 10);
    await runGraph('t-last'); // a second turn: more checkpoints, blobs and writes
    const graph = new StateGraph(State)
      .addNode('a', (s) => ({ n: s.n + 1 }))
      .addEdge(START, 'a')
      .compile({ checkpointer: saver });
    const config = { configurable: { thread_id: 't-last' } };
    const finalState = await graph.getState(config);
    const before = await counts('t-last');
    expect(before.checkpoints).toBeGreaterThan(1);

    const report = await pruneFinishedThreads(db.ledger.pool, { olderThanDays: 7, checkpoints: 'last' });

    expect(report).toMatchObject({ threads: 1, jobs: 1, checkpoints: before.checkpoints - 1, complete: true });
    const after = await counts('t-last');
    expect(after.checkpoints).toBe(1);
    expect(after.blobs).toBeLessThan(before.blobs);
    const kept = await graph.getState(config);
    expect(kept.values).toEqual(finalState.values);
    expect(kept.config.configurable?.checkpoint_id).toBe(finalState.config.configurable?.checkpoint_id);
  });

  it("with checkpoints 'all' removes no checkpoint and marks no job, and refuses an unknown policy", async () => {
    await job('t-all', 'completed', 10);
    const before = await counts('t-all');
    expect(await pruneFinishedThreads(db.ledger.pool, { olderThanDays: 7, checkpoints: 'all' })).toMatchObject({ threads: 0, checkpoints: 0 });
    expect(await counts('t-all')).toEqual(before);
    await expect(pruneFinishedThreads(db.ledger.pool, { olderThanDays: 7, checkpoints: 'some' as 'all' })).rejects.toThrow(RangeError);
  });

  it('removes nothing on a second pass and refuses a non-positive age', async () => {
    await db.ledger.pool.query(`UPDATE jobs SET pruned_at = now() WHERE thread_id = 't-all'`);
    const again = await pruneFinishedThreads(db.ledger.pool, { olderThanDays: 7 });
    expect(again).toMatchObject({ threads: 0, jobs: 0, checkpoints: 0, jobEvents: 0, complete: true });
    await expect(pruneFinishedThreads(db.ledger.pool, { olderThanDays: 0 })).rejects.toThrow(RangeError);
  });
});
