// Admission under concurrency: one job per idempotency key (ARCHITECTURE.md, invariant 6, crash window M),
// nothing half-written, and multitask "reject" refusing a busy thread even when racing itself.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDb, testDb } from '../../../test/support/db';
import { IdempotencyConflictError, ThreadBusyError } from '../src/index';
import { jobIn, warmPool, withWidePool } from './support/jobs';

let db: TestDb;
beforeAll(async () => {
  db = await testDb('admit', { poolSize: 30 });
  await warmPool(db.ledger.pool, 25);
});
afterAll(() => db.close());

async function jobsWithKey(key: string): Promise<number> {
  return Number((await db.ledger.pool.query('SELECT count(*) AS n FROM jobs WHERE idempotency_key = $1', [key])).rows[0].n);
}

/** Job rows without their `accepted` event, and events of jobs that do not exist: both must stay empty. */
async function halfWritten(): Promise<unknown[]> {
  const r = await db.ledger.pool.query(
    `SELECT j.job_id FROM jobs j
      WHERE (SELECT count(*) FROM job_events e WHERE e.job_id = j.job_id AND e.type = 'accepted') <> 1`,
  );
  return r.rows;
}

describe('admit', () => {
  it('50 concurrent admissions with one key make one job, and all 50 answers name it', async () => {
    const { ledger } = db;
    const req = { graph: 'echo', input: { steps: 2 }, idempotencyKey: 'key-50', metadata: { by: 'test' } };
    // 50 connections, so all 50 admissions are in flight in the server at once.
    const results = await withWidePool(db, 50, (wide) => Promise.all(Array.from({ length: 50 }, () => wide.admit(req))));
    const ids = new Set(results.map((r) => r.job.jobId));
    expect(ids.size).toBe(1);
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(await jobsWithKey('key-50')).toBe(1);
    const [jobId] = [...ids];
    expect((await ledger.events(jobId!)).map((e) => e.type)).toEqual(['accepted']);
    // A later retry of the same request, with its keys in another order, is still the same job.
    const again = await ledger.admit({ metadata: { by: 'test' }, idempotencyKey: 'key-50', input: { steps: 2 }, graph: 'echo' });
    expect(again).toMatchObject({ created: false, job: { jobId } });
  });

  it('the same key with another body is a conflict, also when both bodies race', async () => {
    const { ledger } = db;
    const { job } = await ledger.admit({ graph: 'echo', input: { n: 1 }, idempotencyKey: 'key-conflict' });
    const err = await ledger.admit({ graph: 'echo', input: { n: 2 }, idempotencyKey: 'key-conflict' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IdempotencyConflictError);
    expect(err).toMatchObject({ code: 'IDEMPOTENCY_CONFLICT', idempotencyKey: 'key-conflict', existingJobId: job.jobId });

    const bodies = Array.from({ length: 40 }, (_, i) => ({ graph: 'echo', input: { side: i % 2 }, idempotencyKey: 'key-race' }));
    const settled = await Promise.allSettled(bodies.map((b) => ledger.admit(b)));
    const ok = settled.flatMap((s, i) => (s.status === 'fulfilled' ? [{ side: i % 2, jobId: s.value.job.jobId }] : []));
    const failed = settled.flatMap((s, i) => (s.status === 'rejected' ? [{ side: i % 2, err: s.reason }] : []));
    // One body won; every admission of it got the one job, every admission of the other a conflict.
    const winner = ok[0]!.side;
    expect(ok.every((o) => o.side === winner)).toBe(true);
    expect(new Set(ok.map((o) => o.jobId)).size).toBe(1);
    expect(ok).toHaveLength(20);
    expect(failed.every((f) => f.side !== winner && f.err instanceof IdempotencyConflictError)).toBe(true);
    expect(await jobsWithKey('key-race')).toBe(1);
  });

  it('keys are per tenant', async () => {
    const { ledger } = db;
    const a = await ledger.admit({ tenant: 'acme', graph: 'echo', input: {}, idempotencyKey: 'shared' });
    const b = await ledger.admit({ tenant: 'globex', graph: 'echo', input: { other: true }, idempotencyKey: 'shared' });
    expect(a.job.jobId).not.toBe(b.job.jobId);
    expect(b.created).toBe(true);
  });

  it('a refused admission writes nothing', async () => {
    const { ledger } = db;
    const count = async () => Number((await ledger.pool.query('SELECT (SELECT count(*) FROM jobs) + (SELECT count(*) FROM job_events) AS n')).rows[0].n);
    const before = await count();
    // max_attempts < 1 violates a CHECK constraint after the statement started writing.
    await expect(ledger.admit({ graph: 'echo', input: {}, maxAttempts: 0, idempotencyKey: 'bad' })).rejects.toMatchObject({ code: '23514' });
    await expect(ledger.admit({ graph: 'echo', input: {}, idempotencyKey: 'key-50' })).rejects.toBeInstanceOf(IdempotencyConflictError);
    expect(await count()).toBe(before);
    expect(await halfWritten()).toEqual([]);
  });

  it('multitask reject refuses a thread with an unfinished job and admits once it has finished', async () => {
    const { ledger } = db;
    const threadId = 'thread-reject';
    const first = await ledger.admit({ graph: 'echo', input: {}, threadId, multitask: 'reject' });
    const err = await ledger.admit({ graph: 'echo', input: { n: 2 }, threadId, multitask: 'reject' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ThreadBusyError);
    expect(err).toMatchObject({ code: 'THREAD_BUSY', threadId, activeJobId: first.job.jobId });
    // Enqueue (the default) still queues behind it.
    expect((await ledger.admit({ graph: 'echo', input: { n: 3 }, threadId })).created).toBe(true);
    // Parked jobs are unfinished too.
    const parked = await jobIn(ledger, 'interrupted', { threadId: 'thread-parked' });
    await expect(ledger.admit({ graph: 'echo', input: {}, threadId: 'thread-parked', multitask: 'reject' })).rejects.toBeInstanceOf(ThreadBusyError);
    await ledger.cancel(parked.job.jobId);
    expect((await ledger.admit({ graph: 'echo', input: {}, threadId: 'thread-parked', multitask: 'reject' })).created).toBe(true);
  });

  it('concurrent rejects on a free thread admit at most one job; a retry with the same key is not refused', async () => {
    const { ledger } = db;
    const threadId = 'thread-reject-race';
    const settled = await Promise.allSettled(
      Array.from({ length: 30 }, (_, i) => ledger.admit({ graph: 'echo', input: { i }, threadId, multitask: 'reject' })),
    );
    const ok = settled.filter((s) => s.status === 'fulfilled');
    expect(ok).toHaveLength(1);
    expect(settled.filter((s) => s.status === 'rejected').every((s) => s.reason instanceof ThreadBusyError)).toBe(true);
    expect((await ledger.list({ threadId })).jobs).toHaveLength(1);

    const keyed = { graph: 'echo', input: {}, threadId: 'thread-reject-key', multitask: 'reject' as const, idempotencyKey: 'rk' };
    const results = await Promise.all(Array.from({ length: 20 }, () => ledger.admit(keyed)));
    expect(new Set(results.map((r) => r.job.jobId)).size).toBe(1);
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(await halfWritten()).toEqual([]);
  });
});
