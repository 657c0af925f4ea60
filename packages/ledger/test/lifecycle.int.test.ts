import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDb, testDb } from '../../../test/support/db';
import { LeaseLostError } from '../src/index';

let db: TestDb;
beforeAll(async () => {
  db = await testDb('lifecycle');
});
afterAll(() => db.close());

describe('job lifecycle', () => {
  it('admits, claims, checkpoints and completes with a full timeline', async () => {
    const { ledger } = db;
    const { job, created } = await ledger.admit({ graph: 'echo', input: { steps: 2 } });
    expect(created).toBe(true);
    expect(job.status).toBe('accepted');
    expect(job).toMatchObject({ deliveries: 1, deliveryId: job.jobId });
    await ledger.recordEnqueued([{ jobId: job.jobId, deliveryId: job.jobId }]);
    const claim = await ledger.claim(job.jobId, 'w1');
    if (!claim.ok) throw new Error(`claim refused: ${claim.reason}`);
    expect(claim.job.status).toBe('starting');
    expect(claim.job.fencingToken).toBe(1);
    expect(await ledger.recordCheckpoint(job.jobId, 1)).toBe(true);
    expect(await ledger.heartbeat('w1', [{ jobId: job.jobId, token: 1 }])).toEqual([]);
    await ledger.complete(job.jobId, 1, { ok: true });
    const done = await ledger.get(job.jobId);
    expect(done.status).toBe('completed');
    expect(done.result).toEqual({ ok: true });
    expect(done.leaseOwner).toBeNull();
    const types = (await ledger.events(job.jobId)).map((e) => e.type);
    expect(types).toEqual(['accepted', 'enqueued', 'claimed', 'checkpointed', 'completed']);
  });

  it('records claimed and, on a first attempt of a graph the caller runs, started in the claim statement', async () => {
    const { ledger } = db;
    const { job } = await ledger.admit({ graph: 'echo', input: {} });
    const first = await ledger.claim(job.jobId, 'w1', 50, { startGraphs: ['echo'] });
    expect(first).toMatchObject({ ok: true, started: true, mayHavePendingEffects: false, job: { status: 'starting', attempt: 1 } });
    const events = await ledger.events(job.jobId);
    expect(events.map((e) => e.type)).toEqual(['accepted', 'claimed', 'started']);
    expect(events.slice(1)).toMatchObject([
      { type: 'claimed', attempt: 1, fencingToken: 1, workerId: 'w1', detail: { from: 'accepted', reason: null } },
      { type: 'started', attempt: 1, fencingToken: 1, workerId: 'w1', detail: {} },
    ]);
    // A later attempt is never `started` by the claim, and its effects must be read.
    await ledger.recordEffectIntent(job.jobId, 1, 'k', 'book', 'idem');
    await new Promise((r) => setTimeout(r, 80));
    const second = await ledger.claim(job.jobId, 'w2', 60_000, { startGraphs: ['echo'] });
    expect(second).toMatchObject({ ok: true, started: false, mayHavePendingEffects: true, job: { attempt: 2 } });
    expect(await ledger.pendingEffects(job.jobId)).toEqual([{ effectKey: 'k', name: 'book' }]);
    // A graph the caller does not run, or no startGraphs: only `claimed`.
    for (const startGraphs of [['vacation'], undefined]) {
      const { job: other } = await ledger.admit({ graph: 'echo', input: {} });
      expect(await ledger.claim(other.jobId, 'w3', 60_000, { startGraphs })).toMatchObject({ ok: true, started: false, mayHavePendingEffects: false });
      expect((await ledger.events(other.jobId)).map((e) => e.type)).toEqual(['accepted', 'claimed']);
    }
  });

  it('refuses every write with an old token after a newer claim', async () => {
    const { ledger } = db;
    const { job } = await ledger.admit({ graph: 'echo', input: {} });
    const first = await ledger.claim(job.jobId, 'w1', 50);
    expect(first.ok).toBe(true);
    await new Promise((r) => setTimeout(r, 80));
    const second = await ledger.claim(job.jobId, 'w2');
    if (!second.ok) throw new Error('second claim refused');
    expect(second.job.fencingToken).toBe(2);
    await expect(ledger.complete(job.jobId, 1, {})).rejects.toBeInstanceOf(LeaseLostError);
    await expect(ledger.fail(job.jobId, 1, { message: 'x' })).rejects.toBeInstanceOf(LeaseLostError);
    await expect(ledger.appendEvent(job.jobId, 1, 'resumed')).rejects.toBeInstanceOf(LeaseLostError);
    await expect(ledger.recordEffectIntent(job.jobId, 1, 'k', 'book', 'idem')).rejects.toBeInstanceOf(LeaseLostError);
    expect(await ledger.recordCheckpoint(job.jobId, 1)).toBe(false);
    expect(await ledger.heartbeat('w1', [{ jobId: job.jobId, token: 1 }])).toEqual([job.jobId]);
    expect((await ledger.get(job.jobId)).status).toBe('starting');
    expect(await ledger.effects(job.jobId)).toEqual([]);
    await ledger.recordEffectIntent(job.jobId, 2, 'k', 'book', 'idem');
    await ledger.settleEffect(job.jobId, 2, 'k', { result: { id: 1 } });
    await ledger.complete(job.jobId, 2, { ok: 2 });
    expect((await ledger.get(job.jobId)).result).toEqual({ ok: 2 });
  });

  it('sweeps a backdated lease to recovery_required with an event', async () => {
    const { ledger } = db;
    const { job } = await ledger.admit({ graph: 'echo', input: {} });
    const c = await ledger.claim(job.jobId, 'dead-worker', 1);
    expect(c.ok).toBe(true);
    await new Promise((r) => setTimeout(r, 20));
    const swept = await ledger.upkeep.sweep({ graceMs: 0 });
    expect(swept.expired).toContain(job.jobId);
    expect(swept.undelivered.map((u) => u.jobId)).toContain(job.jobId);
    const after = await ledger.get(job.jobId);
    expect(after.status).toBe('recovery_required');
    expect(after.recoveryReason).toBe('lease_expired');
    const last = (await ledger.events(job.jobId)).at(-1);
    expect(last).toMatchObject({ type: 'recovery_required', workerId: 'dead-worker', detail: { reason: 'lease_expired' } });
  });
});
