// A per-graph rate limit shared by the fleet: 5 runs per second of `echo`, three worker
// processes, 160 jobs at once (32 s of overload). Judged from the ledger's `claimed` times, not
// from how fast this machine is: no window of one second holds more than 5 claims, the claims
// come from more than one worker, held-back jobs wait in the queue and never fail, every job
// completes, and every job a worker held back (its delivery's log in the queue says so) has a
// `rate_limited` event saying why, once per attempt, including a claim that only timed out on the
// limit row's lock behind other claims.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveryId, openQueue, sendAdmitted } from '../../packages/queue/src/index';
import { waitFor } from '../support/db';
import { queueConfigFor, stackEnv } from '../support/stack';
import { type OwnStack, ownStack, startWorker } from './own-stack';

const JOBS = 160;
const PER_SECOND = 5;

describe('per-graph rate limit', () => {
  let stack: OwnStack;

  beforeAll(async () => {
    stack = await ownStack('rate_limit', 7133);
  });
  afterAll(() => stack?.close());

  it('keeps the fleet within 5 runs per second over 30 s of overload, and every job completes', async () => {
    const { db, redis, add } = stack;
    const q = queueConfigFor('redis', db.url, db.schema, redis.url);
    // A long lease: this test is about the limit, not about leases lost on a crowded machine.
    const env = stackEnv(q, db.url, db.schema, { LEASE_TTL_MS: '30000' });
    await db.ledger.limits.set('echo', { maxPerInterval: PER_SECOND, intervalMs: 1_000 });
    await Promise.all(['rl-w1', 'rl-w2', 'rl-w3'].map((id) => startWorker(env, id, add)));
    const admitted = await Promise.all(Array.from({ length: JOBS }, () => db.ledger.admit({ graph: 'echo', input: { steps: 1 } })));
    const queue = openQueue(q);
    await sendAdmitted(
      queue,
      db.ledger,
      admitted.map((a) => a.job),
    );
    const ids = admitted.map((a) => a.job.jobId);
    const count = async (status: string) =>
      Number((await db.ledger.pool.query('SELECT count(*) FROM jobs WHERE job_id = ANY($1) AND status = $2', [ids, status])).rows[0].count);
    await waitFor('every job to complete', async () => (await count('completed')) === JOBS, 540_000, 500);
    expect(await count('failed')).toBe(0);

    const claims = (
      await db.ledger.pool.query(
        `SELECT extract(epoch FROM at) * 1000 AS ms, worker_id FROM job_events WHERE job_id = ANY($1) AND type = 'claimed' ORDER BY at`,
        [ids],
      )
    ).rows.map((r) => ({ ms: Number(r.ms), worker: r.worker_id as string }));
    expect(claims.length).toBeGreaterThanOrEqual(JOBS);
    // Sliding window: the claim 5 after any claim comes at least one second later.
    let tightest = Number.POSITIVE_INFINITY;
    for (let i = 0; i + PER_SECOND < claims.length; i++) tightest = Math.min(tightest, (claims[i + PER_SECOND]?.ms ?? 0) - (claims[i]?.ms ?? 0));
    expect(tightest).toBeGreaterThanOrEqual(1_000);
    const span = (claims[claims.length - 1]?.ms ?? 0) - (claims[0]?.ms ?? 0);
    expect(span).toBeGreaterThanOrEqual(((JOBS - PER_SECOND) / PER_SECOND) * 1_000);
    expect(new Set(claims.map((c) => c.worker)).size).toBeGreaterThan(1);
    // Held back, not failed, and said so: every job whose delivery log says a worker held it back
    // has its event, and no attempt has two (a held-back job is retried many times).
    const heldByWorkers: string[] = [];
    for (const id of ids) {
      const { deliveries } = await db.ledger.get(id);
      for (let n = 0; n < deliveries; n++) {
        const { logs } = await queue.getJobLogs(deliveryId(id, n));
        if (logs.some((l) => l.includes('held back by its graph'))) {
          heldByWorkers.push(id);
          break;
        }
      }
    }
    await queue.close();
    const events = (
      await db.ledger.pool.query(`SELECT job_id, attempt, count(*)::int AS n FROM job_events WHERE job_id = ANY($1) AND type = 'rate_limited' GROUP BY 1, 2`, [
        ids,
      ])
    ).rows as Array<{ job_id: string; attempt: number; n: number }>;
    expect(heldByWorkers.length).toBeGreaterThan(0);
    const withEvent = new Set(events.map((e) => e.job_id));
    expect(heldByWorkers.filter((id) => !withEvent.has(id))).toEqual([]);
    expect(events.filter((e) => e.n > 1)).toEqual([]);
    // Each was written while the job waited: none at the attempt the job then ran (another delivery
    // of the job may be claimed while a refused one records its event).
    const late = await db.ledger.pool.query(
      `SELECT count(*)::int AS n FROM job_events e JOIN jobs j USING (job_id) WHERE j.job_id = ANY($1) AND e.type = 'rate_limited' AND e.attempt >= j.attempt`,
      [ids],
    );
    expect(late.rows[0].n).toBe(0);
    console.log(
      `rate limit: ${claims.length} claims over ${(span / 1000).toFixed(1)} s, tightest 5-claim gap ${tightest.toFixed(1)} ms, ${heldByWorkers.length} jobs held back`,
    );
  }, 600_000);
});
