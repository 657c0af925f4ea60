// In-process worker against real PostgreSQL and a real queue (both backends): the happy path,
// retries, poison jobs, thread ordering, interrupts and cancellation.
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { deliver, openQueue } from '../../../packages/queue/src/index';
import { loadGraphs } from '../../../packages/runtime/src/index';
import { sleep, type TestDb, testDb } from '../../../test/support/db';
import { queueConfigFor, submit, waitForEvent, waitForStatus } from '../../../test/support/stack';
import { RunledgerWorker } from '../src/index';
import '../../../test/support/provided';

const backends = (['redis', 'postgres'] as const).filter((b) => b === 'postgres' || inject('redisUrl'));

describe.each(backends)('worker on the %s queue backend', (backend) => {
  let db: TestDb;
  let worker: RunledgerWorker;
  let q: ReturnType<typeof queueConfigFor>;

  beforeAll(async () => {
    db = await testDb(`worker_${backend}`, { leaseTtlMs: 2_000 });
    q = queueConfigFor(backend, db.url, db.schema, inject('redisUrl'));
    worker = new RunledgerWorker({
      ledger: db.ledger,
      queueConfig: q,
      graphs: await loadGraphs(),
      workerId: `w-${backend}`,
      schema: db.schema,
      concurrency: 8,
      redeliverGraceMs: 1_000,
    });
    await worker.start();
  });
  afterAll(async () => {
    await worker?.close();
    await db?.close();
  });

  it('runs an echo job to completed with its timeline', async () => {
    const job = await submit(db.ledger, q, { graph: 'echo', input: { steps: 3 } });
    const done = await waitForStatus(db.ledger, job.jobId, ['completed', 'failed']);
    expect(done.status).toBe('completed');
    expect(done.result).toMatchObject({ done: 3, log: ['step 1', 'step 2', 'step 3'] });
    // The result (invoke's output, not read back) is exactly the saved final state's values.
    const saver = new PostgresSaver(db.ledger.pool, undefined, { schema: db.schema });
    const graph = (await loadGraphs()).get('echo')!.build(saver);
    const state = await graph.getState({ configurable: { thread_id: job.threadId } });
    expect(state.next).toEqual([]);
    expect(done.result).toEqual(JSON.parse(JSON.stringify(state.values)));
    const events = await db.ledger.events(job.jobId);
    // `enqueued` is recorded after the queue add, so a quick worker may claim before it.
    expect(events.map((e) => e.type).filter((t) => t !== 'enqueued')).toEqual(['accepted', 'claimed', 'started', 'checkpointed', 'completed']);
    // One first hand-over (its delivery id is the job id). On a loaded machine the claim can come
    // after the 1 s redelivery grace, and the reconciler's redelivery adds an event of its own.
    const firstHandOvers = events.filter((e) => e.type === 'enqueued' && e.detail.deliveryId === job.jobId);
    expect(firstHandOvers).toHaveLength(1);
  });

  it('records a vacation agent’s result exactly as its saved final state (messages included)', async () => {
    const job = await submit(db.ledger, q, { graph: 'vacation', input: { delays: { flight: 0, hotel: 0, car: 0 } } });
    const done = await waitForStatus(db.ledger, job.jobId, ['completed', 'failed', 'manual_reconcile']);
    expect(done.status).toBe('completed');
    const saver = new PostgresSaver(db.ledger.pool, undefined, { schema: db.schema });
    const state = await (await loadGraphs())
      .get('vacation')!
      .build(saver)
      .getState({ configurable: { thread_id: job.threadId } });
    expect(done.result).toEqual(JSON.parse(JSON.stringify(state.values)));
  });

  it('retries a graph that throws twice, then completes on attempt 3 with its error history', async () => {
    const job = await submit(db.ledger, q, { graph: 'echo', input: { failTimes: 2 } });
    const done = await waitForStatus(db.ledger, job.jobId, ['completed', 'failed']);
    expect(done.status).toBe('completed');
    expect(done.attempt).toBe(3);
    const retries = (await db.ledger.events(job.jobId)).filter((e) => e.type === 'recovery_required');
    expect(retries).toHaveLength(2);
    expect(retries[0]?.detail).toMatchObject({
      reason: 'retry',
      error: { message: expect.stringContaining('planned failure on attempt 1'), node: 'step', attempt: 1 },
    });
  });

  it('fails a graph that always throws after max attempts', async () => {
    const job = await submit(db.ledger, q, { graph: 'echo', input: { failTimes: 50 }, maxAttempts: 2 });
    const done = await waitForStatus(db.ledger, job.jobId, ['completed', 'failed']);
    expect(done.status).toBe('failed');
    expect(done.attempt).toBe(2);
    expect(done.error).toMatchObject({ attemptsExhausted: true, message: expect.stringContaining('attempt 2') });
  });

  it('leaves a job of a graph no worker serves waiting, visibly, instead of failing or looping', async () => {
    const job = await submit(db.ledger, q, { graph: 'no_such_graph', input: {} });
    await waitForEvent(db.ledger, job.jobId, 'waiting_for_version', (e) => e.type === 'waiting_for_version');
    await sleep(1_500);
    const waiting = await db.ledger.get(job.jobId);
    expect([waiting.status, waiting.attempt, waiting.versionServed]).toEqual(['accepted', 0, false]);
    expect((await db.ledger.events(job.jobId)).map((e) => e.type)).not.toContain('claimed');
    await db.ledger.cancel(job.jobId);
  });

  it('runs two jobs of one thread one after the other, in admission order', async () => {
    const threadId = `thread-${backend}-order`;
    const first = await submit(db.ledger, q, { graph: 'echo', input: { steps: 2, sleepMs: 300 }, threadId });
    const second = await submit(db.ledger, q, { graph: 'echo', input: { steps: 1 }, threadId });
    const [a, b] = await Promise.all([waitForStatus(db.ledger, first.jobId, ['completed']), waitForStatus(db.ledger, second.jobId, ['completed'])]);
    expect(b.startedAt!.getTime()).toBeGreaterThanOrEqual(a.completedAt!.getTime());
    // The second turn ran on top of the first: the thread's counter continued.
    expect(b.result).toMatchObject({ done: 3 });
  });

  it('parks an approval at its interrupt and finishes it after a resume', async () => {
    const job = await submit(db.ledger, q, { graph: 'approval', input: { request: 'new laptop' } });
    const parked = await waitForStatus(db.ledger, job.jobId, ['interrupted', 'failed']);
    expect(parked.status).toBe('interrupted');
    expect(JSON.stringify(parked.interrupt)).toContain('new laptop');
    const resumed = await db.ledger.resume(job.jobId, { approved: true });
    // Delivery of the resumed job, as the producer does.
    const queue = openQueue(q);
    await deliver(queue, db.ledger, { jobId: job.jobId, deliveries: resumed.deliveries });
    await queue.close();
    const done = await waitForStatus(db.ledger, job.jobId, ['completed', 'failed']);
    expect(done.result).toMatchObject({ outcome: 'new laptop: approved' });
  });

  it('stops a running attempt within about a second of a cancel', async () => {
    const job = await submit(db.ledger, q, { graph: 'echo', input: { steps: 1, sleepMs: 20_000 } });
    await waitForStatus(db.ledger, job.jobId, ['running']);
    await db.ledger.cancel(job.jobId);
    const t0 = Date.now();
    await expect.poll(() => worker.activeRuns, { timeout: 3_000, interval: 50 }).toBe(0);
    expect(Date.now() - t0).toBeLessThan(2_000);
    expect((await db.ledger.get(job.jobId)).status).toBe('cancelled');
  });
});
