// The reconciler's sweep checks a snapshot of waiting jobs against the queue, one round trip per
// job. A job of a backlog can be claimed, run and finished between the snapshot and its check:
// its delivery then reads "completed", and the sweep must not deliver the finished job again.
import { randomBytes } from 'node:crypto';
import type { Queue, Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type TestDb, testDb, waitFor } from '../../../test/support/db';
import { type DeliveryData, openQueue, openWorker, type QueueConfig, Reconciler, sendAdmitted } from '../src/index';

const redisUrl = inject('redisUrl');

for (const backend of [
  { name: 'redis', skip: !redisUrl },
  { name: 'postgres', skip: false },
] as const) {
  describe.skipIf(backend.skip)(`the reconciler on the ${backend.name} backend`, () => {
    let db: TestDb;
    let config: QueueConfig;
    let queue: Queue<DeliveryData>;

    beforeAll(async () => {
      db = await testDb(`sweep_race_${backend.name}`);
      config =
        backend.name === 'redis'
          ? { backend: 'redis', redisUrl: redisUrl ?? undefined, prefix: `rl-sweep-${randomBytes(4).toString('hex')}` }
          : { backend: 'postgres', databaseUrl: db.url, schema: db.schema };
      queue = openQueue(config);
      await queue.waitUntilReady();
    });
    afterAll(async () => {
      if (backend.name === 'redis') await queue?.obliterate({ force: true }).catch(() => {});
      await queue?.close();
      await db?.close();
    });

    /** A worker that claims each delivery's job and completes it in the ledger, as a Runledger worker would. */
    const runToCompletion = (): Worker<DeliveryData> =>
      openWorker(
        config,
        async (delivery) => {
          const claim = await db.ledger.claim(delivery.data.jobId, 'sweep-race-worker');
          if (!claim.ok) return { outcome: 'refused', reason: claim.reason };
          await db.ledger.complete(claim.job.jobId, claim.job.fencingToken, { done: true });
          return { outcome: 'completed' };
        },
        { concurrency: 1 },
      );

    it('does not deliver again a listed job that was claimed and finished while the sweep ran', async () => {
      const { job } = await db.ledger.admit({ graph: 'echo', input: {} });
      await sendAdmitted(queue, db.ledger, [job]);
      // The interleaving a backlog produces, made certain: the job is run to completion right
      // when the sweep asks the queue about it, after the sweep listed it as still waiting.
      let raced = false;
      const racing = new Proxy(queue, {
        get: (target, prop) => {
          if (prop !== 'getJobState') return Reflect.get(target, prop);
          return async (id: string) => {
            if (id === job.jobId && !raced) {
              raced = true;
              const worker = runToCompletion();
              try {
                await waitFor('the delivery to be run', async () => (await target.getJobState(id)) === 'completed');
              } finally {
                await worker.close();
              }
            }
            return target.getJobState(id);
          };
        },
      });
      const report = await new Reconciler(db.ledger, racing, { graceMs: 0 }).sweepOnce();
      expect(raced).toBe(true);
      expect(report).toMatchObject({ redelivered: 0, claimedMeanwhile: 1 });
      const after = await db.ledger.get(job.jobId);
      expect(after).toMatchObject({ status: 'completed', deliveries: 1, deliveryId: job.jobId });
      const types = (await db.ledger.events(job.jobId)).map((e) => e.type);
      expect(types.filter((t) => t === 'enqueued')).toHaveLength(1);
      expect(types.at(-1)).toBe('completed');
    });

    it('still delivers again a listed job whose delivery finished without running it', async () => {
      const { job } = await db.ledger.admit({ graph: 'echo', input: {} });
      await sendAdmitted(queue, db.ledger, [job]);
      // A delivery that ended without a claim (e.g. its worker refused it): the job still waits.
      const refusing = openWorker(config, async () => ({ outcome: 'refused', reason: 'terminal' }), { concurrency: 1 });
      try {
        await waitFor('the delivery to finish', async () => (await queue.getJobState(job.jobId)) === 'completed');
      } finally {
        await refusing.close();
      }
      const report = await new Reconciler(db.ledger, queue, { graceMs: 0 }).sweepOnce();
      expect(report).toMatchObject({ redelivered: 1, claimedMeanwhile: 0 });
      expect(await db.ledger.get(job.jobId)).toMatchObject({ status: 'accepted', deliveries: 2, deliveryId: `${job.jobId}-d1` });
    });
  });
}
