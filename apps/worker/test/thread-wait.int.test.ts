// Jobs waiting behind a parked job of their thread (issue: a claim loop that grew without bound).
// In-process worker on real PostgreSQL and a real queue (both backends): a waiting job costs a
// bounded number of claims however long the thread stays parked and however often the reconciler
// sweeps, and runs in admission order once the thread is free, handed on by the job that ended or,
// when that hand-off is lost, by the reconciler.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Job } from '../../../packages/ledger/src/index';
import { deliver, openQueue, queueHas } from '../../../packages/queue/src/index';
import { loadGraphs } from '../../../packages/runtime/src/index';
import { sleep, type TestDb, testDb, waitFor } from '../../../test/support/db';
import { queueConfigFor, submit, waitForStatus } from '../../../test/support/stack';
import { RunledgerWorker, type WorkerOptions } from '../src/index';
import '../../../test/support/provided';

const backends = (['redis', 'postgres'] as const).filter((b) => b === 'postgres' || inject('redisUrl'));

describe.each(backends)('jobs waiting for their thread on the %s queue backend', (backend) => {
  let db: TestDb;
  let q: ReturnType<typeof queueConfigFor>;
  const workers: RunledgerWorker[] = [];
  /** Refused claims per job, as the worker reported its deliveries. */
  const refused = new Map<string, number>();

  async function startWorker(name: string, options: Partial<WorkerOptions>): Promise<RunledgerWorker> {
    const worker = new RunledgerWorker({
      ledger: db.ledger,
      queueConfig: q,
      graphs: await loadGraphs(),
      workerId: `${name}-${backend}`,
      schema: db.schema,
      concurrency: 8,
      onOutcome: (jobId, o) => {
        if (o.outcome === 'refused') refused.set(jobId, (refused.get(jobId) ?? 0) + 1);
      },
      ...options,
    });
    workers.push(worker);
    await worker.start();
    return worker;
  }

  beforeAll(async () => {
    db = await testDb(`thread_wait_${backend}`, { leaseTtlMs: 2_000 });
    q = queueConfigFor(backend, db.url, db.schema, inject('redisUrl'));
  });
  afterAll(async () => {
    for (const w of workers.splice(0)) await w.close();
    await db?.close();
  });

  async function stop(worker: RunledgerWorker): Promise<void> {
    workers.splice(workers.indexOf(worker), 1);
    await worker.close();
  }

  /** A parked approval on a new thread and `n` echo turns submitted behind it, each refused once. */
  async function parkedThreadWithWaiters(threadId: string, n: number): Promise<{ park: Job; waiting: Job[] }> {
    const park = await submit(db.ledger, q, { graph: 'approval', input: { request: 'park' }, threadId });
    expect((await waitForStatus(db.ledger, park.jobId, ['interrupted', 'failed'])).status).toBe('interrupted');
    const waiting: Job[] = [];
    for (let i = 0; i < n; i++) waiting.push(await submit(db.ledger, q, { graph: 'echo', input: { steps: 1 }, threadId }));
    await waitFor(`a refused claim for each of ${n} waiting jobs`, async () => waiting.every((j) => (refused.get(j.jobId) ?? 0) >= 1));
    return { park, waiting };
  }

  async function resume(park: Job): Promise<void> {
    const resumed = await db.ledger.resume(park.jobId, { approved: true });
    const queue = openQueue(q);
    await deliver(queue, db.ledger, { jobId: park.jobId, deliveries: resumed.deliveries });
    await queue.close();
  }

  /** Every job completed, one after the other on the thread, in admission order. */
  async function expectRanInOrder(jobs: Job[]): Promise<void> {
    const done = await Promise.all(jobs.map((j) => waitForStatus(db.ledger, j.jobId, ['completed', 'failed', 'cancelled'])));
    expect(done.map((j) => j.status)).toEqual(jobs.map(() => 'completed'));
    for (let i = 1; i < done.length; i++) expect(done[i]!.startedAt!.getTime()).toBeGreaterThanOrEqual(done[i - 1]!.completedAt!.getTime());
    // Each echo turn continued the thread's counter: the turns ran one on top of the other.
    expect(done.map((j) => (j.result as { done: number }).done)).toEqual(jobs.map((_, i) => i + 1));
  }

  it('10 jobs behind a parked approval cost at most 2 claims and deliveries each over many sweeps, then run in admission order on resume', async () => {
    // Sweeps every 100 ms with a 200 ms grace: a waiting job's delivery is past its grace at every sweep below.
    const worker = await startWorker('fast-sweep', { sweepIntervalMs: 100, redeliverGraceMs: 200 });
    const { park, waiting } = await parkedThreadWithWaiters(`wait-${backend}-ten`, 10);
    let redelivered = 0;
    for (let sweep = 0; sweep < 8; sweep++) {
      await sleep(300);
      redelivered += (await worker.sweepOnce()).redelivered;
    }
    expect(redelivered).toBe(0);
    for (const j of waiting) {
      expect(refused.get(j.jobId) ?? 0, `refused claims of ${j.jobId}`).toBeLessThanOrEqual(2);
      const now = await db.ledger.get(j.jobId);
      expect(now.deliveries, `deliveries of ${j.jobId}`).toBeLessThanOrEqual(2);
      expect(now).toMatchObject({ status: 'accepted', blockedBy: park.jobId });
      const waits = (await db.ledger.events(j.jobId)).filter((e) => e.type === 'waiting_for_thread');
      expect(waits.map((e) => e.detail)).toEqual([{ blockedBy: park.jobId }]);
    }
    expect(await db.ledger.countWaitingForThread()).toBe(10);

    await resume(park);
    await expectRanInOrder(waiting);
    // Each waiting job was refused at most once more, while the job before it finished.
    for (const j of waiting) expect(refused.get(j.jobId) ?? 0).toBeLessThanOrEqual(2);
    await stop(worker);
  });

  it('hands the thread to the next job when one ends, with no reconciler sweep to rely on', async () => {
    const worker = await startWorker('no-sweep', { sweepIntervalMs: 600_000, redeliverGraceMs: 600_000 });
    const { park, waiting } = await parkedThreadWithWaiters(`wait-${backend}-handoff`, 3);
    await resume(park);
    await expectRanInOrder(waiting);
    await stop(worker);
  });

  it('loses no waiting job when the thread is freed without a hand-off: the reconciler delivers from the ledger', async () => {
    const worker = await startWorker('safety-net', { sweepIntervalMs: 100, redeliverGraceMs: 200 });
    const { park, waiting } = await parkedThreadWithWaiters(`wait-${backend}-lost`, 3);
    // Waiting jobs live in the ledger only: the queue holds none of their deliveries, so losing
    // the queue's data loses nothing.
    const queue = openQueue(q);
    const anyQueued = async () => {
      for (const j of waiting) if (await queueHas(queue, (await db.ledger.get(j.jobId)).deliveryId)) return true;
      return false;
    };
    await waitFor('no delivery of a waiting job left in the queue', async () => !(await anyQueued()), 10_000);
    await queue.close();
    // As after a crash between freeing the thread and handing it on (ledger.cancel hands nothing on).
    await db.ledger.cancel(park.jobId);
    await expectRanInOrder(waiting);
    await stop(worker);
  });
});
