// The reconciler's sweep: expired leases become recovery_required with an event, exactly once
// however many workers sweep at the same moment; live leases and parked jobs are left alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sleep, type TestDb, testDb } from '../../../test/support/db';
import { backdateLease, jobIn, warmPool } from './support/jobs';

let db: TestDb;
beforeAll(async () => {
  db = await testDb('sweep');
  await warmPool(db.ledger.pool, 10);
});
afterAll(() => db.close());

async function recoveryEvents(jobId: string) {
  return (await db.ledger.events(jobId)).filter((e) => e.type === 'recovery_required');
}

describe('sweep', () => {
  it('moves a backdated lease to recovery_required with an event naming the dead worker', async () => {
    const { ledger } = db;
    const { job } = await jobIn(ledger, 'running');
    await backdateLease(ledger.pool, job.jobId);
    expect((await ledger.upkeep.sweep()).expired).toEqual([job.jobId]);
    expect(await ledger.get(job.jobId)).toMatchObject({ status: 'recovery_required', recoveryReason: 'lease_expired', leaseOwner: null, leaseExpiresAt: null });
    const events = await recoveryEvents(job.jobId);
    expect(events).toEqual([expect.objectContaining({ workerId: 'setup-worker', fencingToken: 1, attempt: 1, detail: { reason: 'lease_expired' } })]);
    // Nothing left to sweep: a second pass is a no-op.
    expect((await ledger.upkeep.sweep()).expired).toEqual([]);
    expect(await recoveryEvents(job.jobId)).toHaveLength(1);
  });

  it('moves a short lease once it runs out by the database clock, and leaves live leases alone', async () => {
    const { ledger } = db;
    const { job: short } = await ledger.admit({ graph: 'echo', input: {} });
    const { job: live } = await ledger.admit({ graph: 'echo', input: {} });
    // Long enough that a loaded machine still sweeps before it runs out, short enough to wait for.
    expect((await ledger.claim(short.jobId, 'w-short', 1_000)).ok).toBe(true);
    expect((await ledger.claim(live.jobId, 'w-live', 60_000)).ok).toBe(true);
    expect((await ledger.upkeep.sweep()).expired).not.toContain(short.jobId);
    await sleep(1_100);
    const { expired } = await ledger.upkeep.sweep();
    expect(expired).toContain(short.jobId);
    expect(expired).not.toContain(live.jobId);
    expect((await ledger.get(live.jobId)).status).toBe('starting');
  });

  it('5 concurrent sweepers move each of 40 expired jobs exactly once', async () => {
    const { ledger } = db;
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      const { job } = await jobIn(ledger, i % 2 ? 'running' : 'starting');
      ids.push(job.jobId);
    }
    // Parked, finished and waiting jobs carry no lease and must not be touched.
    const bystanders = await Promise.all((['accepted', 'interrupted', 'manual_reconcile', 'completed'] as const).map((s) => jobIn(ledger, s)));
    await ledger.pool.query("UPDATE jobs SET lease_expires_at = now() - interval '1 second' WHERE job_id = ANY($1)", [ids]);
    // Small batches make the sweepers take several turns each and contend for the same rows.
    const results = await Promise.all(
      Array.from({ length: 5 }, async () => {
        const moved: string[] = [];
        for (;;) {
          const { expired } = await ledger.upkeep.sweep({ limit: 3 });
          if (expired.length === 0) return moved;
          moved.push(...expired);
        }
      }),
    );
    const all = results.flat();
    expect(all).toHaveLength(40);
    expect(new Set(all)).toEqual(new Set(ids));
    for (const id of ids) expect(await recoveryEvents(id), id).toHaveLength(1);
    const statuses = (await ledger.pool.query('SELECT DISTINCT status FROM jobs WHERE job_id = ANY($1)', [ids])).rows.map((r) => r.status);
    expect(statuses).toEqual(['recovery_required']);
    for (const b of bystanders) expect((await ledger.get(b.job.jobId)).status).toBe(b.job.status);
  });

  it('lists undelivered jobs: accepted ones and recoveries that are due, not those waiting for run_after', async () => {
    const { ledger } = db;
    const { job: fresh } = await ledger.admit({ graph: 'echo', input: {} });
    const { job: retry, token } = await jobIn(ledger, 'starting');
    await ledger.retryLater(retry.jobId, token, { message: 'flaky' }, 60_000);
    const { undelivered } = await ledger.upkeep.sweep({ graceMs: 0 });
    const listed = undelivered.map((u) => u.jobId);
    expect(listed).toContain(fresh.jobId);
    expect(listed).not.toContain(retry.jobId);
    expect(await ledger.claim(retry.jobId, 'w')).toMatchObject({ ok: false, reason: 'not_due', status: 'recovery_required' });
    // The admission's own delivery hides the job for the grace period, and so does a later one.
    expect(undelivered.find((u) => u.jobId === fresh.jobId)).toMatchObject({ deliveries: 1, deliveryId: fresh.jobId });
    expect((await ledger.upkeep.sweep({ graceMs: 60_000 })).undelivered.map((u) => u.jobId)).not.toContain(fresh.jobId);
    expect(await ledger.markEnqueued(fresh.jobId, 1, `${fresh.jobId}-d1`)).toBe(true);
    expect(await ledger.markEnqueued(fresh.jobId, 1, `${fresh.jobId}-d1`)).toBe(false);
    expect((await ledger.upkeep.sweep({ graceMs: 60_000 })).undelivered.map((u) => u.jobId)).not.toContain(fresh.jobId);
  });

  it('counts a lease that expired as an attempt, and a drained hand-over as none', async () => {
    const { ledger } = db;
    const { job, token } = await jobIn(ledger, 'running');
    await ledger.release(job.jobId, token, 'drained');
    const resumed = await ledger.claim(job.jobId, 'w2');
    expect(resumed).toMatchObject({ ok: true, previousStatus: 'recovery_required', previousReason: 'drained', job: { attempt: 1, status: 'running' } });
    await backdateLease(ledger.pool, job.jobId);
    await ledger.upkeep.sweep();
    expect(await ledger.claim(job.jobId, 'w3')).toMatchObject({ ok: true, previousReason: 'lease_expired', job: { attempt: 2, fencingToken: 3 } });
  });
});
