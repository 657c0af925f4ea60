// Retention: pruneFinishedThreads removes checkpoints, blobs and writes (all, all but the latest
// checkpoint, or none) only of threads whose every job is terminal and older than the cutoff, then
// (jobs 'delete', the default) their job rows with effects, stream chunks and sent webhook
// deliveries, keeping a job whose delivery is pending; with jobs 'keep' every job row and effect
// stays. Events leave by day partitions only (scale-migration.int.test.ts). Old cron firings go
// too, each cron keeping its latest. Reports counts.
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

/** An effect, two stream chunks and (when given) a webhook delivery in `delivery` state of `jobId`, as a streamed run with a webhook leaves them. */
async function sideRows(jobId: string, delivery?: 'pending' | 'delivered' | 'gave_up'): Promise<void> {
  const q = (text: string, values: unknown[] = [jobId]) => db.ledger.pool.query(text, values);
  await q(`INSERT INTO effects (job_id, effect_key, name, status, idempotency_key, fencing_token) VALUES ($1, 'book', 'book', 'committed', $1 || ':book', 1)`);
  await q(`INSERT INTO run_stream_events (job_id, seq, attempt, fencing_token, event, data) VALUES ($1, 0, 1, 1, 'values', '{}'), ($1, 1, 1, 1, 'end', null)`);
  if (delivery)
    await q('INSERT INTO webhook_deliveries (job_id, tenant, run_status, state) SELECT job_id, tenant, status, $2 FROM jobs WHERE job_id = $1', [
      jobId,
      delivery,
    ]);
}

/** What is left of these jobs: rows in jobs, effects, run_stream_events and webhook_deliveries. */
const leftOf = async (jobIds: string[]) => {
  const q = (table: string) => db.ledger.pool.query(`SELECT count(*) FROM ${table} WHERE job_id = ANY ($1)`, [jobIds]).then((r) => Number(r.rows[0].count));
  return { jobs: await q('jobs'), effects: await q('effects'), streams: await q('run_stream_events'), deliveries: await q('webhook_deliveries') };
};

describe('pruneFinishedThreads', () => {
  it("prunes only threads whose every job is terminal and old and, with jobs 'keep', keeps their job rows", async () => {
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

    const report = await pruneFinishedThreads(db.ledger.pool, { olderThanDays: 7, batchSize: 2, jobs: 'keep' });

    expect(report).toEqual({
      threads: 1,
      jobs: 3,
      checkpoints: before.checkpoints,
      checkpointBlobs: before.blobs,
      checkpointWrites: before.writes,
      jobsDeleted: 0,
      effects: 0,
      streamEvents: 0,
      webhookDeliveries: 0,
      cronFirings: 0,
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

  it('deletes the job rows of an old finished thread with their effects, stream chunks and sent webhook deliveries, and keeps those of a running, recent or webhook-pending one', async () => {
    const gone = [await job('t-gone', 'completed', 10), await job('t-gone', 'failed', 9)];
    await sideRows(gone[0]!, 'delivered');
    await sideRows(gone[1]!, 'gave_up');
    const key = await jobIn(db.ledger, 'completed', { threadId: 't-gone-key', idempotencyKey: 'k-gone' });
    await db.ledger.pool.query("UPDATE jobs SET completed_at = now() - interval '10 days' WHERE job_id = $1", [key.job.jobId]);
    const hook = await job('t-hook', 'completed', 10);
    await sideRows(hook, 'pending');
    const busy = [await job('t-busy', 'completed', 10), await job('t-busy', 'running')];
    await sideRows(busy[0]!);
    const recent = [await job('t-new', 'completed', 10), await job('t-new', 'completed', 1)];
    await sideRows(recent[0]!, 'delivered');
    const kept = { busy: await leftOf(busy), recent: await leftOf(recent) };
    expect(await leftOf(gone)).toEqual({ jobs: 2, effects: 2, streams: 4, deliveries: 2 });

    const report = await pruneFinishedThreads(db.ledger.pool, { olderThanDays: 7 });

    // t-gone's two, t-gone-key's one, and t-old's three that the test above marked under jobs 'keep'
    // (as a previous release left them): switching to 'delete' removes them too.
    expect(report).toMatchObject({ threads: 3, jobsDeleted: 6, effects: 2, streamEvents: 4, webhookDeliveries: 2, complete: true });
    expect(await leftOf(gone)).toEqual({ jobs: 0, effects: 0, streams: 0, deliveries: 0 });
    expect((await counts('t-old')).jobs).toBe(0);
    expect(await leftOf([hook])).toEqual({ jobs: 1, effects: 1, streams: 2, deliveries: 1 });
    expect({ busy: await leftOf(busy), recent: await leftOf(recent) }).toEqual(kept);
    // The idempotency key is honoured no longer: the same admission is a new job.
    const again = await db.ledger.admit({ graph: 'echo', input: {}, threadId: 't-gone-key', idempotencyKey: 'k-gone' });
    expect(again.created).toBe(true);
    expect(again.job.jobId).not.toBe(key.job.jobId);

    // Once its webhook is sent, the next pass deletes the job that waited for it.
    await db.ledger.pool.query("UPDATE webhook_deliveries SET state = 'delivered', settled_at = now() WHERE job_id = $1", [hook]);
    expect(await pruneFinishedThreads(db.ledger.pool, { olderThanDays: 7 })).toMatchObject({ threads: 0, jobsDeleted: 1, webhookDeliveries: 1 });
    expect(await leftOf([hook])).toEqual({ jobs: 0, effects: 0, streams: 0, deliveries: 0 });
  });

  it('removes cron firings older than the cutoff but the latest of each cron', async () => {
    const q = (text: string, values: unknown[] = []) => db.ledger.pool.query(text, values);
    for (const id of ['c-often', 'c-rare']) {
      await q("INSERT INTO crons (cron_id, graph, schedule, next_fire_at) VALUES ($1, 'echo', '0 0 1 1 *', now() + interval '1 day')", [id]);
    }
    await q(`INSERT INTO cron_firings (cron_id, scheduled_at, outcome)
             SELECT 'c-often', now() - make_interval(days => d), 'missed' FROM generate_series(0, 20) d`);
    await q(
      `INSERT INTO cron_firings (cron_id, scheduled_at, outcome) VALUES ('c-rare', now() - interval '300 days', 'missed'), ('c-rare', now() - interval '200 days', 'missed')`,
    );

    expect(await pruneFinishedThreads(db.ledger.pool, { olderThanDays: 7, batchSize: 5 })).toMatchObject({ cronFirings: 14 + 1 });
    const left = await q(
      "SELECT cron_id, count(*)::int AS n, min(scheduled_at) < now() - interval '100 days' AS old FROM cron_firings GROUP BY cron_id ORDER BY cron_id",
    );
    expect(left.rows).toEqual([
      { cron_id: 'c-often', n: 7, old: false },
      { cron_id: 'c-rare', n: 1, old: true },
    ]);
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

  it("with checkpoints 'last' keeps the latest checkpoint and what it refers to, and the thread's latest job, so its final state still reads", async () => {
    const older = await job('t-last', 'completed', 11);
    const latest = await job('t-last', 'completed', 10);
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

    expect(report).toMatchObject({ threads: 1, jobs: 2, checkpoints: before.checkpoints - 1, jobsDeleted: 1, complete: true });
    expect((await leftOf([older, latest])).jobs).toBe(1);
    expect((await db.ledger.get(latest)).status).toBe('completed');
    const after = await counts('t-last');
    expect(after.checkpoints).toBe(1);
    expect(after.blobs).toBeLessThan(before.blobs);
    const kept = await graph.getState(config);
    expect(kept.values).toEqual(finalState.values);
    expect(kept.config.configurable?.checkpoint_id).toBe(finalState.config.configurable?.checkpoint_id);
  });

  it("with checkpoints 'all' removes no checkpoint but still prunes the thread's jobs, keeping its latest, and refuses an unknown policy", async () => {
    const older = await job('t-all', 'completed', 11);
    await sideRows(older);
    await job('t-all', 'completed', 10);
    const before = await counts('t-all');
    const report = await pruneFinishedThreads(db.ledger.pool, { olderThanDays: 7, checkpoints: 'all' });
    expect(report).toMatchObject({ threads: 1, jobs: 2, checkpoints: 0, checkpointBlobs: 0, checkpointWrites: 0, jobsDeleted: 1, effects: 1, streamEvents: 2 });
    expect(await counts('t-all')).toEqual({ ...before, jobs: 1, events: expect.any(Number) });
    await expect(pruneFinishedThreads(db.ledger.pool, { olderThanDays: 7, checkpoints: 'some' as 'all' })).rejects.toThrow(RangeError);
    await expect(pruneFinishedThreads(db.ledger.pool, { olderThanDays: 7, jobs: 'drop' as 'keep' })).rejects.toThrow(/jobs must be delete or keep/);
  });

  it('removes nothing on a second pass and refuses a non-positive age', async () => {
    await db.ledger.pool.query(`UPDATE jobs SET pruned_at = now() WHERE thread_id = 't-all'`);
    const again = await pruneFinishedThreads(db.ledger.pool, { olderThanDays: 7 });
    expect(again).toMatchObject({ threads: 0, jobs: 0, checkpoints: 0, jobEvents: 0, complete: true });
    await expect(pruneFinishedThreads(db.ledger.pool, { olderThanDays: 0 })).rejects.toThrow(RangeError);
  });
});
