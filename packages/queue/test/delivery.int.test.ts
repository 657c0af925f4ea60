// Delivery of job references on both BullMQ backends: a delivery is queued once per id, the
// ledger records it once, and a worker receives `{ jobId }` and labels, never the input.
import { randomBytes } from 'node:crypto';
import type { Queue, Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type TestDb, testDb, waitFor } from '../../../test/support/db';
import {
  DELIVERY_LOCK_MS,
  type DeliveryData,
  deliver,
  deliveryId,
  handOffThread,
  isQueued,
  isQueuedOrTaken,
  openQueue,
  openWorker,
  type QueueConfig,
  queueHas,
  sendAdmitted,
} from '../src/index';

const redisUrl = inject('redisUrl');
if (!redisUrl) console.warn('[queue tests] no Redis (REDIS_URL unset, nothing on :6379): SKIPPING the Redis-backend delivery tests.');

describe('deliveryId', () => {
  it('is the job id first, then suffixed, never with a colon nor all digits', () => {
    expect(deliveryId('abc', 0)).toBe('abc');
    expect(deliveryId('abc', 2)).toBe('abc-d2');
    expect(deliveryId('123', 1)).not.toMatch(/^\d+$|:/);
  });
});

const backends: Array<{ name: 'redis' | 'postgres'; skip: boolean }> = [
  { name: 'redis', skip: !redisUrl },
  { name: 'postgres', skip: false },
];

for (const backend of backends) {
  describe.skipIf(backend.skip)(`delivery on the ${backend.name} backend`, () => {
    let db: TestDb;
    let config: QueueConfig;
    let queue: Queue<DeliveryData>;
    const workers: Worker<DeliveryData>[] = [];

    beforeAll(async () => {
      db = await testDb(`queue_${backend.name}`);
      config =
        backend.name === 'redis'
          ? { backend: 'redis', redisUrl: redisUrl ?? undefined, prefix: `rl-test-${randomBytes(4).toString('hex')}` }
          : { backend: 'postgres', databaseUrl: db.url, schema: db.schema };
      queue = openQueue(config);
      await queue.waitUntilReady();
    });
    afterAll(async () => {
      for (const w of workers) await w.close();
      if (backend.name === 'redis') await queue?.obliterate({ force: true }).catch(() => {});
      await queue?.close();
      await db?.close();
    });

    it("sends the admission's own delivery, records it once, and numbers later deliveries", async () => {
      const { ledger } = db;
      const { job } = await ledger.admit({ graph: 'echo', input: { secret: 'stays in postgres' } });
      // The admission issued delivery 0 (id = job id) in its own row; nothing is queued yet.
      expect(job).toMatchObject({ deliveries: 1, deliveryId: job.jobId });
      expect(await isQueued(queue, job.deliveryId)).toBe(false);
      expect(await queueHas(queue, job.deliveryId)).toBe(false);
      await sendAdmitted(queue, ledger, [job]);
      expect(await isQueued(queue, job.jobId)).toBe(true);
      expect(await queueHas(queue, job.jobId)).toBe(true);
      expect((await ledger.get(job.jobId)).deliveries).toBe(1);
      expect((await ledger.events(job.jobId)).filter((e) => e.type === 'enqueued').map((e) => e.detail)).toEqual([{ deliveryId: job.jobId }]);
      // A reconciler's redelivery gets the next id and moves the counter once: a second caller
      // with the same view adds an ignored duplicate and records nothing.
      const second = await deliver(queue, ledger, { jobId: job.jobId, deliveries: 1 });
      expect(second).toBe(`${job.jobId}-d1`);
      expect(await deliver(queue, ledger, { jobId: job.jobId, deliveries: 1 })).toBe(second);
      expect(await isQueued(queue, second)).toBe(true);
      expect(await queue.getJobCountByTypes('waiting', 'delayed', 'prioritized')).toBe(2);
      expect(await ledger.get(job.jobId)).toMatchObject({ deliveries: 2, deliveryId: second });
      expect((await ledger.events(job.jobId)).filter((e) => e.type === 'enqueued')).toHaveLength(2);
      expect(await isQueued(queue, null)).toBe(false);
      expect(await isQueued(queue, 'never-added')).toBe(false);
    });

    it('sends many admissions with one addBulk', async () => {
      const jobs = await Promise.all([1, 2, 3].map(async (n) => (await db.ledger.admit({ graph: 'echo', input: { n } })).job));
      await sendAdmitted(queue, db.ledger, jobs);
      for (const j of jobs) {
        expect(await isQueued(queue, j.jobId)).toBe(true);
        expect((await db.ledger.events(j.jobId)).map((e) => e.type)).toEqual(['accepted', 'enqueued']);
      }
    });

    it('queues a delayed delivery as delayed', async () => {
      const { job } = await db.ledger.admit({ graph: 'echo', input: {} });
      const id = await deliver(queue, db.ledger, job, 60_000);
      expect(await queue.getJobState(id)).toBe('delayed');
      expect(await isQueued(queue, id)).toBe(true);
    });

    it('hands a thread on to its next job once it is free, unless that job still has a delivery waiting', async () => {
      const { ledger } = db;
      const threadId = `handoff-${backend.name}`;
      const { job: holder } = await ledger.admit({ graph: 'approval', input: {}, threadId });
      const claim = await ledger.claim(holder.jobId, 'w');
      if (!claim.ok) throw new Error(`claim refused: ${claim.reason}`);
      await ledger.park(holder.jobId, claim.job.fencingToken, { ask: 'approve?' });
      const { job: next } = await ledger.admit({ graph: 'echo', input: {}, threadId });
      await sendAdmitted(queue, ledger, [next]);
      // The thread is held (its first job is parked): nothing to hand on.
      expect(await handOffThread(queue, ledger, next)).toBeNull();
      await ledger.cancel(holder.jobId);
      // The next job's delivery still waits in the queue and will find the thread free.
      expect(await handOffThread(queue, ledger, next)).toBeNull();
      // A worker refused it and dropped it while the thread was held: deliver it again, once.
      await queue.remove(next.jobId);
      expect(await handOffThread(queue, ledger, next)).toBe(`${next.jobId}-d1`);
      expect(await isQueued(queue, `${next.jobId}-d1`)).toBe(true);
      expect(await handOffThread(queue, ledger, next)).toBeNull();
      expect(await ledger.get(next.jobId)).toMatchObject({ deliveries: 2, deliveryId: `${next.jobId}-d1` });
    });

    it('hands a worker the job reference and its labels, never the input, and the delivery then leaves the queue', async () => {
      const { ledger } = db;
      const { job } = await ledger.admit({ graph: 'echo', input: { secret: 'stays in postgres' } });
      await sendAdmitted(queue, ledger, [job]);
      const id = job.jobId;
      const received: Array<{ id: string | undefined; data: unknown }> = [];
      const worker = openWorker(
        config,
        async (j) => {
          received.push({ id: j.id, data: j.data });
        },
        { concurrency: 4, autorun: true },
      );
      workers.push(worker);
      const mine = await waitFor('the worker to receive the delivery', async () => received.find((r) => r.id === id));
      expect(mine.data).toEqual({ jobId: job.jobId, graph: 'echo', threadId: job.threadId, tenant: job.tenant, attempt: 0, delivery: 0 });
      expect(JSON.stringify(mine.data)).not.toContain('stays in postgres');
      await waitFor('the delivery to leave the queue', async () => !(await isQueued(queue, id)));
    });

    it('counts a delivery a worker took as on its way to the claim for the lock time, no longer', async () => {
      for (const w of workers.splice(0)) await w.close();
      const { job } = await db.ledger.admit({ graph: 'echo', input: {} });
      await sendAdmitted(queue, db.ledger, [job]);
      // A worker that takes deliveries by hand and never answers (its claim is slow, or it died).
      const taker = openWorker(config, async () => {}, { autorun: false, lockDuration: DELIVERY_LOCK_MS });
      workers.push(taker);
      const taken = await waitFor('the worker to take the delivery', async () => ((await taker.getNextJob('held'))?.id === job.jobId ? true : undefined));
      expect(taken).toBe(true);
      expect(await queue.getJobState(job.jobId)).toBe('active');
      expect(await isQueued(queue, job.jobId)).toBe(false);
      expect(await isQueuedOrTaken(queue, job.jobId)).toBe(true);
      const processedOn = (await queue.getJob(job.jobId))?.processedOn ?? 0;
      expect(await isQueuedOrTaken(queue, job.jobId, processedOn + DELIVERY_LOCK_MS - 1)).toBe(true);
      expect(await isQueuedOrTaken(queue, job.jobId, processedOn + DELIVERY_LOCK_MS)).toBe(false);
      expect(await isQueuedOrTaken(queue, 'never-added')).toBe(false);
    });
  });
}
