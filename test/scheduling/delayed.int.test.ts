// Delayed runs through the ledger: the due time is a ledger column (run_after); BullMQ's delay
// only saves the worker a refused claim. A job delayed 3 s is claimed no earlier than its due
// time and within 1 s after it; after a FLUSHALL of Redis while it waits (this test's own
// Redis), the reconciler delivers it from the ledger and it runs once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDb, testDb } from '../support/db';
import { type Proc, queueConfigFor, stackEnv, waitForStatus } from '../support/stack';
import { killAll, ownRedis, post, startProducer, startWorker } from './own-stack';

describe('delayed runs', () => {
  let db: TestDb;
  let redis: Awaited<ReturnType<typeof ownRedis>>;
  let url: string;
  const procs: Proc[] = [];
  const add = (p: Proc) => {
    procs.push(p);
    return p;
  };

  beforeAll(async () => {
    db = await testDb('delayed');
    redis = await ownRedis(7131);
    const env = stackEnv(queueConfigFor('redis', db.url, db.schema, redis.url), db.url, db.schema, { SWEEP_INTERVAL_MS: '200' });
    url = (await startProducer(env, add)).url;
    await startWorker(env, 'delayed-w1', add);
  });
  afterAll(async () => {
    await killAll(procs);
    await redis?.stop();
    await db?.close();
  });

  /** The job's `claimed` and `completed` event times (database clock). */
  async function timeline(jobId: string) {
    const events = await db.ledger.events(jobId);
    const at = (type: string) => events.filter((e) => e.type === type).map((e) => e.at.getTime());
    return { claims: at('claimed'), completed: at('completed') };
  }

  it('runs no earlier than its due time and within 1 s after it', async () => {
    const sentAt = Date.now();
    const { status, body } = await post(`${url}/v1/jobs`, { graph: 'echo', input: { steps: 1 }, delayMs: 3_000 });
    expect(status).toBe(202);
    const due = (await db.ledger.get(body.jobId)).runAfter?.getTime() ?? 0;
    // delayMs counts from when the producer read the request (same machine, same clock).
    expect(due - sentAt).toBeGreaterThanOrEqual(3_000);
    await waitForStatus(db.ledger, body.jobId, ['completed'], 20_000);
    const { claims, completed } = await timeline(body.jobId);
    expect(claims).toHaveLength(1);
    expect(completed).toHaveLength(1);
    const lateBy = (claims[0] ?? 0) - due;
    expect(lateBy).toBeGreaterThanOrEqual(0);
    expect(lateBy).toBeLessThan(1_000);
  });

  it('still runs, once, after Redis is flushed while it waits', async () => {
    const { body } = await post(`${url}/v1/jobs`, { graph: 'echo', input: { steps: 1 }, delayMs: 3_000 });
    expect(body.enqueued).toBe(true);
    const due = (await db.ledger.get(body.jobId)).runAfter?.getTime() ?? 0;
    await new Promise((r) => setTimeout(r, 1_000));
    await redis.flushAll();
    expect((await db.ledger.get(body.jobId)).status).toBe('accepted');
    await waitForStatus(db.ledger, body.jobId, ['completed'], 20_000);
    const { claims, completed } = await timeline(body.jobId);
    expect(claims).toHaveLength(1);
    expect(completed).toHaveLength(1);
    const lateBy = (claims[0] ?? 0) - due;
    expect(lateBy).toBeGreaterThanOrEqual(0);
    // Its delivery is gone: the reconciler's sweep (every SWEEP_INTERVAL_MS, 1 s) finds it due (no
    // grace after the due time) and delivers it, so it starts within a sweep of its due time.
    expect(lateBy).toBeLessThan(1_000);
    // The delayed delivery was flushed: the reconciler issued the one that ran.
    expect((await db.ledger.get(body.jobId)).deliveries).toBe(2);
  });
});
