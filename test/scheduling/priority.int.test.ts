// Priorities through BullMQ's own: one worker at concurrency 1 busy with a slow job, 50 jobs of
// priority 10 waiting (sent as one batch), then 5 of priority 1 admitted last. The five run
// first (right after the slow job), in the ledger's claim order, and every low one completes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDb, testDb, waitFor } from '../support/db';
import { type Proc, queueConfigFor, stackEnv, waitForStatus } from '../support/stack';
import { killAll, ownRedis, post, startProducer, startWorker } from './own-stack';

describe('priorities', () => {
  let db: TestDb;
  let redis: Awaited<ReturnType<typeof ownRedis>>;
  const procs: Proc[] = [];
  const add = (p: Proc) => {
    procs.push(p);
    return p;
  };

  beforeAll(async () => {
    db = await testDb('priority');
    redis = await ownRedis(7134);
  });
  afterAll(async () => {
    await killAll(procs);
    await redis?.stop();
    await db?.close();
  });

  it('runs the high-priority jobs admitted last first, and completes the low ones', async () => {
    const env = stackEnv(queueConfigFor('redis', db.url, db.schema, redis.url), db.url, db.schema, { WORKER_CONCURRENCY: '1', LEASE_TTL_MS: '30000' });
    const { url } = await startProducer(env, add);
    await startWorker(env, 'prio-w1', add);
    const slow = (await post(`${url}/v1/jobs`, { graph: 'echo', input: { steps: 1, sleepMs: 4_000 } })).body.jobId;
    await waitForStatus(db.ledger, slow, ['starting', 'running'], 60_000);
    const low = await post(`${url}/v1/jobs/batch`, { jobs: Array.from({ length: 50 }, () => ({ graph: 'echo', input: { steps: 1 }, priority: 10 })) });
    const lowIds = low.body.results.map((r) => {
      expect(r.status).toBe(202);
      return r.body.jobId;
    });
    const highIds: string[] = [];
    for (let i = 0; i < 5; i++) highIds.push((await post(`${url}/v1/jobs`, { graph: 'echo', input: { steps: 1 }, priority: 1 })).body.jobId);
    expect((await db.ledger.get(slow)).status).not.toBe('completed');

    const all = [slow, ...lowIds, ...highIds];
    const done = async () =>
      Number((await db.ledger.pool.query(`SELECT count(*) FROM jobs WHERE job_id = ANY($1) AND status = 'completed'`, [all])).rows[0].count);
    await waitFor('all 56 jobs to complete', async () => (await done()) === all.length, 240_000, 500);
    const order = (await db.ledger.pool.query(`SELECT job_id FROM job_events WHERE job_id = ANY($1) AND type = 'claimed' ORDER BY at`, [all])).rows.map(
      (r) => r.job_id as string,
    );
    expect(order).toHaveLength(all.length);
    expect(order[0]).toBe(slow);
    expect(new Set(order.slice(1, 6))).toEqual(new Set(highIds));
    expect(new Set(order.slice(6))).toEqual(new Set(lowIds));
  }, 400_000);
});
