// Priorities through BullMQ's own: one worker at concurrency 1 busy with a slow job, 50 jobs of
// priority 10 waiting (sent as one batch), then 5 of priority 1 admitted last. The five run
// first (right after the slow job), in the ledger's claim order, and every low one completes.
// Aging: under a continuous stream of priority-1 jobs, a priority-10 job is raised once it has
// waited PRIORITY_AGING_MS; from then on only older raised jobs (and the one run in flight) go
// before it, and it runs ahead of high jobs admitted before it. Judged by the order of the
// ledger's events, not by the machine's speed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/db';
import { queueConfigFor, stackEnv, waitForStatus } from '../support/stack';
import { type OwnStack, ownStack, post, startProducer, startWorker } from './own-stack';

describe('priorities', () => {
  let stack: OwnStack;

  beforeAll(async () => {
    stack = await ownStack('priority', 7134);
  });
  afterAll(() => stack?.close());

  it('runs the high-priority jobs admitted last first, and completes the low ones', async () => {
    const { db, redis, add } = stack;
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

  it('under a continuous stream of high-priority jobs, runs a low one once it has waited the aging bound', async () => {
    const { db, redis, add } = stack;
    const env = stackEnv(queueConfigFor('redis', db.url, db.schema, redis.url), db.url, db.schema, {
      WORKER_CONCURRENCY: '1',
      LEASE_TTL_MS: '30000',
      SWEEP_INTERVAL_MS: '250',
      PRIORITY_AGING_MS: '2000',
    });
    const { url } = await startProducer(env, add);
    await startWorker(env, 'aging-w1', add);
    const highs: string[] = [];
    const admitHighs = async (n: number) => {
      const batch = await post(`${url}/v1/jobs/batch`, {
        jobs: Array.from({ length: n }, () => ({ graph: 'echo', input: { steps: 1, sleepMs: 150 }, priority: 1 })),
      });
      for (const r of batch.body.results) {
        expect(r.status).toBe(202);
        highs.push(r.body.jobId);
      }
    };
    const statusCount = async (ids: string[], status: string) =>
      Number((await db.ledger.pool.query('SELECT count(*) FROM jobs WHERE job_id = ANY($1) AND status = $2', [ids, status])).rows[0].count);
    // The worker is busy with high jobs before the low one arrives, and high jobs keep coming:
    // never fewer than 15 waiting (over 2 s of work) until the low one has been claimed.
    await admitHighs(20);
    const low = (await post(`${url}/v1/jobs`, { graph: 'echo', input: { steps: 1 }, priority: 10 })).body.jobId;
    for (let i = 0; i < 200 && (await db.ledger.get(low)).status === 'accepted'; i++) {
      if ((await statusCount(highs, 'accepted')) < 15) await admitHighs(10);
      await new Promise((r) => setTimeout(r, 100));
    }
    const all = [low, ...highs];
    await waitFor('every job to complete', async () => (await statusCount(all, 'completed')) === all.length, 240_000, 500);

    const events = (
      await db.ledger.pool.query(
        `SELECT job_id, type, detail FROM job_events WHERE job_id = ANY($1) AND type IN ('accepted', 'claimed', 'priority_aged') ORDER BY at, event_id`,
        [all],
      )
    ).rows as Array<{ job_id: string; type: string; detail: Record<string, unknown> }>;
    const at = (jobId: string, type: string) => events.findIndex((e) => e.job_id === jobId && e.type === type);
    const aged = events[at(low, 'priority_aged')];
    expect(aged?.detail).toMatchObject({ priority: 10, agingMs: 2000 });
    expect(Number(aged?.detail.waitedMs)).toBeGreaterThanOrEqual(2000);
    expect((await db.ledger.get(low)).priority).toBe(0);
    // Raised, it is served in the order of its wait among the raised jobs: between its raising
    // and its claim, only jobs admitted before it and raised too are claimed, plus at most the run
    // already fetched (concurrency 1). (High jobs that waited past the bound were raised as well.)
    const lowClaim = at(low, 'claimed');
    const aheadOfIt = (jobId: string) => at(jobId, 'priority_aged') !== -1 && at(jobId, 'accepted') < at(low, 'accepted');
    const claimedBetween = events.slice(at(low, 'priority_aged'), lowClaim).filter((e) => e.type === 'claimed' && !aheadOfIt(e.job_id));
    expect(claimedBetween.length).toBeLessThanOrEqual(1);
    // It went ahead of high jobs admitted before it was claimed, so it did not just wait for the stream to end.
    const overtaken = highs.filter((h) => at(h, 'accepted') < lowClaim && at(h, 'claimed') > lowClaim);
    expect(overtaken.length).toBeGreaterThan(0);
    const highsAfterLow = highs.filter((h) => at(h, 'accepted') > at(low, 'accepted'));
    const passedIt = highsAfterLow.filter((h) => at(h, 'claimed') < lowClaim);
    console.log(
      `aging: the low job waited ${aged?.detail.waitedMs} ms before it was raised; ${passedIt.length} of the ${highsAfterLow.length} high jobs admitted after it ran before it; it overtook ${overtaken.length}`,
    );
  }, 400_000);
});
