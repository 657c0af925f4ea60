// Delivery of job references on both BullMQ backends: a delivery is queued once per id, the
// ledger records it once, and a worker receives `{ jobId }` and nothing else.
import { randomBytes } from 'node:crypto';
import type { Queue, Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type TestDb, testDb, waitFor } from '../../../test/support/db';
import { type DeliveryData, deliver, deliveryId, isQueued, openQueue, openWorker, type QueueConfig } from '../src/index';

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

    it('queues a delivery once per id and records it once in the ledger', async () => {
      const { ledger } = db;
      const { job } = await ledger.admit({ graph: 'echo', input: { secret: 'stays in postgres' } });
      expect(await isQueued(queue, job.deliveryId)).toBe(false);
      const id = await deliver(queue, ledger, { jobId: job.jobId, deliveries: 0 });
      expect(id).toBe(job.jobId);
      expect(await isQueued(queue, id)).toBe(true);
      // A second reconciler with the same view: the add is ignored, the ledger counts one delivery.
      expect(await deliver(queue, ledger, { jobId: job.jobId, deliveries: 0 })).toBe(id);
      expect(await queue.getJobCountByTypes('waiting', 'delayed', 'prioritized')).toBe(1);
      const after = await ledger.get(job.jobId);
      expect(after).toMatchObject({ deliveries: 1, deliveryId: id });
      expect((await ledger.events(job.jobId)).filter((e) => e.type === 'enqueued')).toHaveLength(1);
      // The next delivery gets its own id and is queued next to the first.
      const second = await deliver(queue, ledger, { jobId: job.jobId, deliveries: 1 });
      expect(second).toBe(`${job.jobId}-d1`);
      expect(await isQueued(queue, second)).toBe(true);
      expect(await queue.getJobCountByTypes('waiting', 'delayed', 'prioritized')).toBe(2);
      expect(await isQueued(queue, null)).toBe(false);
      expect(await isQueued(queue, 'never-added')).toBe(false);
    });

    it('queues a delayed delivery as delayed', async () => {
      const { job } = await db.ledger.admit({ graph: 'echo', input: {} });
      const id = await deliver(queue, db.ledger, { jobId: job.jobId, deliveries: 0 }, 60_000);
      expect(await queue.getJobState(id)).toBe('delayed');
      expect(await isQueued(queue, id)).toBe(true);
    });

    it('hands a worker `{ jobId }` only, and the delivery then leaves the queue', async () => {
      const { ledger } = db;
      const { job } = await ledger.admit({ graph: 'echo', input: { secret: 'stays in postgres' } });
      const id = await deliver(queue, ledger, { jobId: job.jobId, deliveries: 0 });
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
      expect(mine.data).toEqual({ jobId: job.jobId });
      await waitFor('the delivery to leave the queue', async () => !(await isQueued(queue, id)));
    });
  });
}
