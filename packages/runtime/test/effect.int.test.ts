import { type Job, LeaseLostError } from '@runledger/ledger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDb, testDb } from '../../../test/support/db';
import { EffectInDoubtError, effect, effectIdempotencyKey, type Reconciliation, type RunContext, toolEffectKey } from '../src/index';
import { claimAttempt, reclaimAfterExpiry } from './support/attempt';

let db: TestDb;
beforeAll(async () => {
  db = await testDb('effects');
});
afterAll(() => db.close());

const newJob = async (): Promise<Job> => (await db.ledger.admit({ graph: 'effects-test', input: {} })).job;

/** A provider stand-in that records the idempotency keys it was called with. */
function provider<T>(answer: T) {
  const calls: string[] = [];
  const call = async (key: string) => {
    calls.push(key);
    return answer;
  };
  return { calls, call };
}

/**
 * Leaves `key` pending the way a dead attempt does: the intent is recorded and the provider
 * called, but the lease is lost (a newer claim) before the commit. Returns the newer attempt.
 */
async function leavePending(job: Job, key: string, name: string) {
  const first = await claimAttempt(db, job);
  let next: Awaited<ReturnType<typeof reclaimAfterExpiry>> | undefined;
  const failure = await effect(first.ctx, { key, name }, async () => {
    next = await reclaimAfterExpiry(db, job);
    return { booked: true };
  }).catch((e: unknown) => e);
  expect(failure).toBeInstanceOf(LeaseLostError);
  expect(await db.ledger.findEffect(job.jobId, key)).toMatchObject({ status: 'pending', attempts: 1, fencingToken: first.ctx.fencingToken });
  return { first: first.ctx, next: next!.ctx };
}

describe('effect()', () => {
  it('records the intent, calls once with the derived key, commits, and then returns the stored result without calling', async () => {
    const job = await newJob();
    const { ctx } = await claimAttempt(db, job);
    const p = provider({ id: 7, at: new Date(0) });
    const result = await effect(ctx, { key: 'charge-1', name: 'charge' }, p.call);
    // Returned as stored JSON, the same on every later read.
    expect(result).toEqual({ id: 7, at: '1970-01-01T00:00:00.000Z' });
    expect(p.calls).toEqual([effectIdempotencyKey(job.jobId, 'charge-1')]);
    expect(await db.ledger.findEffect(job.jobId, 'charge-1')).toMatchObject({ status: 'committed', attempts: 1, name: 'charge', result });

    const later = await reclaimAfterExpiry(db, job);
    expect(await effect(later.ctx, { key: 'charge-1', name: 'charge' }, p.call)).toEqual(result);
    expect(p.calls).toHaveLength(1);
  });

  it('derives one idempotency key per job and effect key, and tool keys from thread and tool_call_id', () => {
    expect(effectIdempotencyKey('job-a', 'k')).toBe(effectIdempotencyKey('job-a', 'k'));
    expect(effectIdempotencyKey('job-a', 'k')).not.toBe(effectIdempotencyKey('job-b', 'k'));
    expect(effectIdempotencyKey('job-a', 'k')).not.toBe(effectIdempotencyKey('job-a', 'k2'));
    expect(toolEffectKey({ threadId: 't-1' } as RunContext, 'call_9')).toBe('t-1:call_9');
  });

  it('records a provider error as failed, rethrows it, and calls again with the same key next time', async () => {
    const job = await newJob();
    const { ctx } = await claimAttempt(db, job);
    const refused = new Error('card declined');
    await expect(effect(ctx, { key: 'k', name: 'charge' }, () => Promise.reject(refused))).rejects.toBe(refused);
    expect(await db.ledger.findEffect(job.jobId, 'k')).toMatchObject({ status: 'failed', error: { message: 'card declined' } });
    const p = provider('ok');
    expect(await effect(ctx, { key: 'k', name: 'charge' }, p.call)).toBe('ok');
    expect(p.calls).toEqual([effectIdempotencyKey(job.jobId, 'k')]);
    expect(await db.ledger.findEffect(job.jobId, 'k')).toMatchObject({ status: 'committed', attempts: 2 });
  });

  it('leaves the effect pending when the provider call fails while the run is aborted (its outcome is unknown)', async () => {
    const job = await newJob();
    const a = await claimAttempt(db, job);
    const fn = async () => {
      a.controller.abort(new Error('cancelled'));
      throw new Error('socket hang up');
    };
    await expect(effect(a.ctx, { key: 'k', name: 'send_email' }, fn)).rejects.toThrow('socket hang up');
    expect(await db.ledger.findEffect(job.jobId, 'k')).toMatchObject({ status: 'pending', error: null });
  });

  it('starts no provider call once the run is aborted: the abort reason is thrown and no row is written', async () => {
    const job = await newJob();
    const a = await claimAttempt(db, job);
    const reason = new Error('draining');
    a.controller.abort(reason);
    const p = provider('x');
    await expect(effect(a.ctx, { key: 'k', name: 'book', idempotent: true }, p.call)).rejects.toBe(reason);
    expect(p.calls).toEqual([]);
    expect(await db.ledger.effects(job.jobId)).toEqual([]);
  });

  describe('a pending effect (outcome unknown)', () => {
    it('is called again with the same key when idempotent', async () => {
      const job = await newJob();
      const { next } = await leavePending(job, 'k', 'book');
      const p = provider({ booked: true });
      expect(await effect(next, { key: 'k', name: 'book', idempotent: true }, p.call)).toEqual({ booked: true });
      expect(p.calls).toEqual([effectIdempotencyKey(job.jobId, 'k')]);
      expect(await db.ledger.findEffect(job.jobId, 'k')).toMatchObject({ status: 'committed', attempts: 2, fencingToken: next.fencingToken });
    });

    it('throws EffectInDoubtError without calling when neither idempotent nor reconcilable', async () => {
      const job = await newJob();
      const { next } = await leavePending(job, 'k', 'book_car');
      const p = provider('never');
      const failure = await effect(next, { key: 'k', name: 'book_car' }, p.call).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(EffectInDoubtError);
      expect(failure).toMatchObject({ name: 'EffectInDoubtError', effectKey: 'k', effectName: 'book_car', code: 'EFFECT_IN_DOUBT' });
      expect(p.calls).toEqual([]);
      expect(await db.ledger.findEffect(job.jobId, 'k')).toMatchObject({ status: 'pending', attempts: 1 });
    });

    it('is committed with the result reconcile reports, without calling', async () => {
      const job = await newJob();
      const { next } = await leavePending(job, 'k', 'book');
      const asked: string[] = [];
      const reconcile = async (key: string): Promise<Reconciliation<{ booked: number }>> => {
        asked.push(key);
        return { outcome: 'committed', result: { booked: 41 } };
      };
      const p = provider({ booked: 99 });
      expect(await effect(next, { key: 'k', name: 'book', reconcile }, p.call)).toEqual({ booked: 41 });
      expect(asked).toEqual([effectIdempotencyKey(job.jobId, 'k')]);
      expect(p.calls).toEqual([]);
      expect(await db.ledger.findEffect(job.jobId, 'k')).toMatchObject({ status: 'committed', attempts: 1, result: { booked: 41 } });
    });

    it('is called again when reconcile reports nothing happened, and stays in doubt when reconcile cannot tell', async () => {
      const job = await newJob();
      const { next } = await leavePending(job, 'absent', 'book');
      const p = provider('booked');
      const absent = async (): Promise<Reconciliation<string>> => ({ outcome: 'absent' });
      expect(await effect(next, { key: 'absent', name: 'book', reconcile: absent }, p.call)).toBe('booked');
      expect(p.calls).toEqual([effectIdempotencyKey(job.jobId, 'absent')]);

      const other = await newJob();
      const pending = await leavePending(other, 'unknown', 'book');
      const unknown = async (): Promise<Reconciliation<string>> => ({ outcome: 'unknown' });
      await expect(effect(pending.next, { key: 'unknown', name: 'book', reconcile: unknown }, p.call)).rejects.toBeInstanceOf(EffectInDoubtError);
      expect(p.calls).toHaveLength(1);
    });
  });

  describe('a stale fencing token', () => {
    it('cannot record an intent: LeaseLostError, no row, no call', async () => {
      const job = await newJob();
      const stale = await claimAttempt(db, job);
      await reclaimAfterExpiry(db, job);
      const p = provider('x');
      await expect(effect(stale.ctx, { key: 'k', name: 'book', idempotent: true }, p.call)).rejects.toBeInstanceOf(LeaseLostError);
      expect(p.calls).toEqual([]);
      expect(await db.ledger.effects(job.jobId)).toEqual([]);
    });

    it('cannot commit: LeaseLostError propagates unchanged and the row stays pending', async () => {
      const job = await newJob();
      const { first, next } = await leavePending(job, 'k', 'book');
      expect(next.fencingToken).toBeGreaterThan(first.fencingToken);
      // And the stale attempt cannot settle it later either.
      await expect(db.ledger.settleEffect(job.jobId, first.fencingToken, 'k', { result: 1 })).rejects.toBeInstanceOf(LeaseLostError);
      expect(await db.ledger.findEffect(job.jobId, 'k')).toMatchObject({ status: 'pending', result: null });
    });

    it('a lease the worker judged lost while the provider answered: the answer is not recorded, the row stays pending', async () => {
      const job = await newJob();
      // The token is still current in the ledger (no newer claim): only the worker's own clock
      // (its lease keeper) says the lease is gone, so the ledger would accept the write.
      const { ctx, controller } = await claimAttempt(db, job);
      const lost = new LeaseLostError(job.jobId, ctx.fencingToken, 'no heartbeat renewed the lease in time; the lease');
      const failure = await effect(ctx, { key: 'k', name: 'book', idempotent: true }, async () => {
        controller.abort(lost);
        return { booked: true };
      }).catch((e: unknown) => e);
      expect(failure).toBe(lost);
      expect(await db.ledger.findEffect(job.jobId, 'k')).toMatchObject({ status: 'pending', result: null, fencingToken: ctx.fencingToken });
      // The next attempt settles it as after a crash: an idempotent provider is called again with the same key.
      const later = await reclaimAfterExpiry(db, job);
      const p = provider({ booked: true });
      expect(await effect(later.ctx, { key: 'k', name: 'book', idempotent: true }, p.call)).toEqual({ booked: true });
      expect(p.calls).toEqual([effectIdempotencyKey(job.jobId, 'k')]);
    });
  });
});
