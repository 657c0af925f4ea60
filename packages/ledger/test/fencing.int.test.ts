// ARCHITECTURE.md, invariant 4: a write with an old fencing token is never applied. Each worker verb is
// called with the superseded token and must leave the job row, its events and its effects
// exactly as they were, and say so (LeaseLostError, a lost heartbeat, or `false`).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDb, testDb } from '../../../test/support/db';
import { LeaseLostError } from '../src/index';
import { backdateLease, snapshot } from './support/jobs';
import { STALE_WRITES } from './support/stale-writes';

let db: TestDb;
beforeAll(async () => {
  db = await testDb('fencing');
});
afterAll(() => db.close());

/** A job whose first lease (token 1, with a pending effect) was taken over by w2 (token 2). */
async function supersededJob(newHolderState: 'starting' | 'running') {
  const { ledger } = db;
  const { job } = await ledger.admit({ graph: 'echo', input: {} });
  const first = await ledger.claim(job.jobId, 'w1');
  if (!first.ok) throw new Error('first claim refused');
  await ledger.recordEffectIntent(job.jobId, 1, 'book-old', 'book', 'idem-old');
  if (newHolderState === 'running') expect(await ledger.recordCheckpoint(job.jobId, 1)).toBe(true);
  await backdateLease(ledger.pool, job.jobId);
  const second = await ledger.claim(job.jobId, 'w2');
  if (!second.ok) throw new Error(`second claim refused: ${second.reason}`);
  expect(second.job).toMatchObject({ fencingToken: 2, status: newHolderState, leaseOwner: 'w2' });
  return job.jobId;
}

describe.each(['starting', 'running'] as const)('after a newer claim (new holder %s)', (state) => {
  it.each(Object.keys(STALE_WRITES))('%s with the old token changes nothing and throws LeaseLostError', async (verb) => {
    const jobId = await supersededJob(state);
    const before = await snapshot(db.ledger.pool, jobId);
    const err = await STALE_WRITES[verb]!(db.ledger, jobId, 1).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(LeaseLostError);
    expect(err).toMatchObject({ code: 'LEASE_LOST', jobId, fencingToken: 1 });
    expect(await snapshot(db.ledger.pool, jobId)).toEqual(before);
  });

  it('heartbeat with the old token reports the job lost and keeps the new lease as it was', async () => {
    const jobId = await supersededJob(state);
    const before = await snapshot(db.ledger.pool, jobId);
    expect(await db.ledger.heartbeat('w1', [{ jobId, token: 1 }], 600_000)).toEqual([jobId]);
    // Even the new holder's own worker id cannot renew with the old token.
    expect(await db.ledger.heartbeat('w2', [{ jobId, token: 1 }], 600_000)).toEqual([jobId]);
    expect(await snapshot(db.ledger.pool, jobId)).toEqual(before);
  });

  it('recordCheckpoint with the old token returns false and changes nothing', async () => {
    const jobId = await supersededJob(state);
    const before = await snapshot(db.ledger.pool, jobId);
    expect(await db.ledger.recordCheckpoint(jobId, 1)).toBe(false);
    expect(await snapshot(db.ledger.pool, jobId)).toEqual(before);
  });

  it("accepts the new holder's writes", async () => {
    const { ledger } = db;
    const jobId = await supersededJob(state);
    expect(await ledger.heartbeat('w2', [{ jobId, token: 2 }])).toEqual([]);
    expect(await ledger.recordCheckpoint(jobId, 2)).toBe(state === 'starting');
    await ledger.appendEvent(jobId, 2, 'resumed', { from: 'checkpoint' });
    const intent = await ledger.recordEffectIntent(jobId, 2, 'book-old', 'book', 'idem-old');
    expect(intent).toMatchObject({ status: 'pending', attempts: 2, fencingToken: 2 });
    expect(await ledger.settleEffect(jobId, 2, 'book-old', { result: { ref: 'B1' } })).toMatchObject({ status: 'committed', result: { ref: 'B1' } });
    await ledger.complete(jobId, 2, { ok: true });
    const job = await ledger.get(jobId);
    expect(job).toMatchObject({ status: 'completed', result: { ok: true }, leaseOwner: null, fencingToken: 2 });
    const events = (await ledger.events(jobId)).filter((e) => e.fencingToken === 2).map((e) => [e.type, e.workerId]);
    const tail = state === 'starting' ? [['checkpointed', 'w2']] : [];
    expect(events).toEqual([['claimed', 'w2'], ...tail, ['resumed', 'w2'], ['completed', 'w2']]);
  });
});

describe('other ways a lease ends', () => {
  it('after a cancel, the holder cannot write, even with its current token', async () => {
    const { ledger } = db;
    const { job } = await ledger.admit({ graph: 'echo', input: {} });
    const c = await ledger.claim(job.jobId, 'w1');
    if (!c.ok) throw new Error('claim refused');
    await ledger.recordEffectIntent(job.jobId, 1, 'book-old', 'book', 'idem-old');
    await ledger.cancel(job.jobId, undefined, 'user asked');
    const before = await snapshot(ledger.pool, job.jobId);
    for (const [verb, write] of Object.entries(STALE_WRITES)) {
      await expect(write(ledger, job.jobId, 1), verb).rejects.toBeInstanceOf(LeaseLostError);
    }
    expect(await ledger.heartbeat('w1', [{ jobId: job.jobId, token: 1 }])).toEqual([job.jobId]);
    expect(await ledger.recordCheckpoint(job.jobId, 1)).toBe(false);
    expect(await snapshot(ledger.pool, job.jobId)).toEqual(before);
  });

  it('after the sweep took an expired lease, the paused worker cannot write (crash window I)', async () => {
    const { ledger } = db;
    const { job } = await ledger.admit({ graph: 'echo', input: {} });
    const c = await ledger.claim(job.jobId, 'paused');
    if (!c.ok) throw new Error('claim refused');
    await ledger.recordEffectIntent(job.jobId, 1, 'book-old', 'book', 'idem-old');
    await backdateLease(ledger.pool, job.jobId);
    expect((await ledger.upkeep.sweep({ graceMs: 60_000 })).expired).toContain(job.jobId);
    const before = await snapshot(ledger.pool, job.jobId);
    for (const [verb, write] of Object.entries(STALE_WRITES)) {
      await expect(write(ledger, job.jobId, 1), verb).rejects.toBeInstanceOf(LeaseLostError);
    }
    expect(await ledger.heartbeat('paused', [{ jobId: job.jobId, token: 1 }])).toEqual([job.jobId]);
    expect(await snapshot(ledger.pool, job.jobId)).toEqual(before);
    expect(before.job).toMatchObject({ status: 'recovery_required', fencing_token: '1' });
  });

  it('a token from the future is refused as well', async () => {
    const { ledger } = db;
    const { job } = await ledger.admit({ graph: 'echo', input: {} });
    const c = await ledger.claim(job.jobId, 'w1');
    if (!c.ok) throw new Error('claim refused');
    const before = await snapshot(ledger.pool, job.jobId);
    await expect(ledger.complete(job.jobId, 2, {})).rejects.toBeInstanceOf(LeaseLostError);
    expect(await ledger.recordCheckpoint(job.jobId, 2)).toBe(false);
    expect(await snapshot(ledger.pool, job.jobId)).toEqual(before);
  });
});
