// Finished deliveries are kept for inspection (Bull Board), bounded by age and count, on both
// BullMQ backends, and keeping them never turns a needed redelivery into a silent no-op: BullMQ
// ignores an `add` whose id exists, finished or not.
import { randomBytes } from 'node:crypto';
import type { Queue, Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type TestDb, testDb, waitFor } from '../../../test/support/db';
import {
  type DeliveryData,
  deliver,
  deliveryId,
  isQueued,
  openQueue,
  openWorker,
  type QueueConfig,
  queueHas,
  Reconciler,
  reachedQueue,
  sendAdmitted,
} from '../src/index';

const redisUrl = inject('redisUrl');

for (const backend of [
  { name: 'redis', skip: !redisUrl },
  { name: 'postgres', skip: false },
] as const) {
  describe.skipIf(backend.skip)(`kept deliveries on the ${backend.name} backend`, () => {
    let db: TestDb;
    let config: QueueConfig;
    let queue: Queue<DeliveryData>;
    let worker: Worker<DeliveryData>;

    beforeAll(async () => {
      db = await testDb(`keep_${backend.name}`);
      const retention = { completedHours: 24, completedCount: 3, failedDays: 7 };
      config =
        backend.name === 'redis'
          ? { backend: 'redis', redisUrl: redisUrl ?? undefined, prefix: `rl-keep-${randomBytes(4).toString('hex')}`, retention }
          : { backend: 'postgres', databaseUrl: db.url, schema: db.schema, retention };
      queue = openQueue(config);
      await queue.waitUntilReady();
      // Finishes every delivery at once, as a worker refused by the ledger would; fails a `broken` one.
      worker = openWorker(
        config,
        async (delivery) => {
          if (delivery.data.graph === 'broken') throw new Error('PostgreSQL unreachable');
          return { outcome: 'refused', reason: 'terminal' };
        },
        { concurrency: 4 },
      );
    });
    afterAll(async () => {
      await worker?.close();
      if (backend.name === 'redis') await queue?.obliterate({ force: true }).catch(() => {});
      await queue?.close();
      await db?.close();
    });

    const finished = (id: string) => waitFor(`delivery ${id} to finish`, async () => (await queue.getJobState(id)) === 'completed');

    it('keeps a finished delivery, named after its graph, with its return value; at most the configured count', async () => {
      const jobs = await Promise.all([1, 2, 3, 4, 5].map(async (n) => (await db.ledger.admit({ graph: 'vacation', input: { n } })).job));
      for (const j of jobs) {
        await sendAdmitted(queue, db.ledger, [j]);
        await finished(j.jobId);
      }
      const last = jobs[4]!;
      const kept = await queue.getJob(last.jobId);
      expect(kept).toMatchObject({ name: 'vacation', returnvalue: { outcome: 'refused', reason: 'terminal' } });
      expect(kept?.data).toMatchObject({ jobId: last.jobId, graph: 'vacation', tenant: last.tenant, threadId: last.threadId });
      // Count 3: the two oldest were removed as later ones finished.
      expect(await queue.getJobCountByTypes('completed')).toBe(3);
      expect(await queue.getJobState(jobs[0]!.jobId)).toBe('unknown');
      // A kept, finished delivery is not on its way to a worker.
      expect(await queueHas(queue, last.jobId)).toBe(false);
      expect(await isQueued(queue, last.jobId)).toBe(false);
      expect(await reachedQueue(queue, db.ledger, last)).toBe(false);
    });

    it('delivers again when the id it must use belongs to a kept, finished delivery', async () => {
      const { job } = await db.ledger.admit({ graph: 'echo', input: {} });
      // Delivery 1 reached the queue but the ledger never recorded it (markEnqueued failed), and it finished.
      const id = deliveryId(job.jobId, 1);
      await queue.add('echo', { jobId: job.jobId }, { jobId: id });
      await finished(id);
      await worker.pause();
      try {
        // The ledger still says one delivery was issued, so the next one uses that same id.
        expect(await deliver(queue, db.ledger, { jobId: job.jobId, deliveries: 1 })).toBe(id);
        expect(await queue.getJobState(id)).toBe('waiting');
        expect(await queue.getJob(id)).toMatchObject({ name: 'echo (redelivery 1)', data: { delivery: 1 } });
      } finally {
        await worker.resume();
      }
    });

    it('lets the reconciler redeliver an accepted job whose kept delivery finished without running it', async () => {
      const { job } = await db.ledger.admit({ graph: 'approval', input: {} });
      await sendAdmitted(queue, db.ledger, [job]);
      await finished(job.jobId);
      await worker.pause();
      try {
        const report = await new Reconciler(db.ledger, queue, { graceMs: 0 }).sweepOnce();
        expect(report.redelivered).toBeGreaterThanOrEqual(1);
        const next = await db.ledger.get(job.jobId);
        expect(next.deliveryId).toBe(`${job.jobId}-d1`);
        expect(await isQueued(queue, next.deliveryId)).toBe(true);
        expect((await queue.getJob(next.deliveryId!))?.name).toBe('approval (redelivery 1)');
      } finally {
        await worker.resume();
      }
    });

    it('keeps a failed delivery with its reason, which no more counts as queued than a completed one', async () => {
      const { job } = await db.ledger.admit({ graph: 'broken', input: {} });
      await sendAdmitted(queue, db.ledger, [job]);
      await waitFor('the delivery to fail', async () => (await queue.getJobState(job.jobId)) === 'failed');
      expect(await queue.getJob(job.jobId)).toMatchObject({ name: 'broken', failedReason: 'PostgreSQL unreachable' });
      expect(await queueHas(queue, job.jobId)).toBe(false);
      expect(await reachedQueue(queue, db.ledger, job)).toBe(false);
    });
  });
}
