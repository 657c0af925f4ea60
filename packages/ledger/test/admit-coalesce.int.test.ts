// Natural group commit of ledger.admit: concurrent calls share one admission statement, yet
// every caller gets its own answer (created, the same job, a conflict, its own refusal) only
// after its row committed, and nothing is ever half-written.
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDb, testDb } from '../../../test/support/db';
import { type AdmitRequest, type AdmitResult, AesGcmPayloadCodec, createPool, IdempotencyConflictError, Ledger, LedgerError } from '../src/index';
import { warmPool, withWidePool } from './support/jobs';

let db: TestDb;
beforeAll(async () => {
  db = await testDb('admit_coalesce', { poolSize: 8 });
  await warmPool(db.ledger.pool, 4);
});
afterAll(() => db.close());

/** A ledger on the test pool that counts the admission statements it sends. */
function countingLedger(options: ConstructorParameters<typeof Ledger>[1] = {}, statement = 'admit_jobs'): { ledger: Ledger; statements: () => number } {
  let n = 0;
  const pool = db.ledger.pool;
  const query = (cfg: unknown, values?: unknown[]) => {
    if ((cfg as pg.QueryConfig).name === `runledger_${statement}`) n++;
    return pool.query(cfg as pg.QueryConfig, values);
  };
  const counted = new Proxy(pool, { get: (t, p) => (p === 'query' ? query : Reflect.get(t, p, t)) });
  return { ledger: new Ledger(counted, options), statements: () => n };
}

/** Job rows without exactly one `accepted` event: must stay empty. */
async function halfWritten(): Promise<unknown[]> {
  const r = await db.ledger.pool.query(
    `SELECT j.job_id FROM jobs j
      WHERE (SELECT count(*) FROM job_events e WHERE e.job_id = j.job_id AND e.type = 'accepted') <> 1`,
  );
  return r.rows;
}

const settle = (ps: Array<Promise<AdmitResult>>) => Promise.allSettled(ps);

describe('coalesced admit', () => {
  it('fresh keys, repeated keys, conflicting bodies and no key, all at once: each gets its own answer', async () => {
    const { ledger, statements } = countingLedger();
    // An earlier admission holds `held`; this burst repeats it, conflicts with it, and races on new keys.
    const held = await ledger.admit({ graph: 'echo', input: { n: 'held' }, idempotencyKey: 'c-held' });
    const before = statements();
    const reqs: Array<{ req: AdmitRequest; expect: 'created' | 'same' | 'conflict' | 'race-a' | 'race-b' }> = [];
    for (let i = 0; i < 10; i++) reqs.push({ req: { graph: 'echo', input: { i }, idempotencyKey: `c-fresh-${i}` }, expect: 'created' });
    for (let i = 0; i < 10; i++) reqs.push({ req: { graph: 'echo', input: { i } }, expect: 'created' });
    for (let i = 0; i < 5; i++) reqs.push({ req: { graph: 'echo', input: { n: 'held' }, idempotencyKey: 'c-held' }, expect: 'same' });
    for (let i = 0; i < 5; i++) reqs.push({ req: { graph: 'echo', input: { n: 'other' }, idempotencyKey: 'c-held' }, expect: 'conflict' });
    // Two bodies racing on a new key: one wins, its twins get its job, the other body conflicts.
    for (let i = 0; i < 10; i++) reqs.push({ req: { graph: 'echo', input: { side: i % 2 }, idempotencyKey: 'c-race' }, expect: i % 2 ? 'race-b' : 'race-a' });
    const order = reqs.map((_, i) => i).sort(() => Math.random() - 0.5);
    const out = await settle(order.map((i) => ledger.admit(reqs[i]!.req)));
    const byIndex = new Map(order.map((i, k) => [i, out[k]!]));

    expect(statements() - before).toBeLessThan(reqs.length / 2);
    const race: Array<{ side: string; s: PromiseSettledResult<AdmitResult> }> = [];
    for (const [i, { req, expect: want }] of reqs.entries()) {
      const s = byIndex.get(i)!;
      if (want === 'created') {
        expect(s).toMatchObject({ status: 'fulfilled', value: { created: true, job: { input: req.input, idempotencyKey: req.idempotencyKey ?? null } } });
      } else if (want === 'same') {
        expect(s).toMatchObject({ status: 'fulfilled', value: { created: false, job: { jobId: held.job.jobId } } });
      } else if (want === 'conflict') {
        expect(s.status).toBe('rejected');
        expect((s as PromiseRejectedResult).reason).toBeInstanceOf(IdempotencyConflictError);
        expect((s as PromiseRejectedResult).reason).toMatchObject({ existingJobId: held.job.jobId });
      } else race.push({ side: want, s });
    }
    const won = race.filter((r) => r.s.status === 'fulfilled');
    const lost = race.filter((r) => r.s.status === 'rejected');
    expect(won).toHaveLength(5);
    expect(new Set(won.map((r) => r.side)).size).toBe(1);
    const jobs = won.map((r) => (r.s as PromiseFulfilledResult<AdmitResult>).value);
    expect(new Set(jobs.map((j) => j.job.jobId)).size).toBe(1);
    expect(jobs.filter((j) => j.created)).toHaveLength(1);
    expect(lost.every((r) => r.side !== won[0]!.side && (r.s as PromiseRejectedResult).reason instanceof IdempotencyConflictError)).toBe(true);

    const count = await db.ledger.pool.query("SELECT count(*)::int AS n FROM jobs WHERE idempotency_key IN ('c-held', 'c-race')");
    expect(count.rows[0].n).toBe(2);
    expect(await halfWritten()).toEqual([]);
  });

  it('a row PostgreSQL refuses fails only its own caller; the rest of the batch is admitted', async () => {
    const { ledger, statements } = countingLedger();
    const before = statements();
    const bad = new Set([3, 11]);
    const reqs: AdmitRequest[] = Array.from({ length: 16 }, (_, i) => ({
      graph: 'echo',
      input: { i },
      idempotencyKey: `c-bad-${i}`,
      // max_attempts < 1 and timeout_ms <= 0 violate CHECK constraints.
      ...(i === 3 ? { maxAttempts: 0 } : i === 11 ? { timeoutMs: -5 } : {}),
    }));
    const out = await settle(reqs.map((r) => ledger.admit(r)));
    for (const [i, s] of out.entries()) {
      if (bad.has(i)) expect(s).toMatchObject({ status: 'rejected', reason: { code: '23514' } });
      else expect(s).toMatchObject({ status: 'fulfilled', value: { created: true, job: { idempotencyKey: `c-bad-${i}` } } });
    }
    // The failed statement was retried row by row.
    expect(statements() - before).toBeGreaterThan(reqs.length);
    const stored = await db.ledger.pool.query("SELECT idempotency_key FROM jobs WHERE idempotency_key LIKE 'c-bad-%'");
    expect(stored.rows.map((r) => r.idempotency_key).sort()).toEqual(reqs.flatMap((r, i) => (bad.has(i) ? [] : [r.idempotencyKey])).sort());
    expect(await halfWritten()).toEqual([]);
  });

  it('an unreachable database fails every caller of the batch with DATABASE_UNAVAILABLE', async () => {
    const pool = createPool({ connectionString: 'postgres://postgres@127.0.0.1:1/none', max: 2, onError: () => {} });
    try {
      const ledger = new Ledger(pool);
      const out = await settle(Array.from({ length: 5 }, (_, i) => ledger.admit({ graph: 'echo', input: { i } })));
      for (const s of out) {
        expect(s.status).toBe('rejected');
        expect((s as PromiseRejectedResult).reason).toBeInstanceOf(LedgerError);
        expect((s as PromiseRejectedResult).reason).toMatchObject({ code: 'DATABASE_UNAVAILABLE' });
      }
    } finally {
      await pool.end();
    }
  });

  it('one call at a time goes alone: no waiting at low load; with coalescing off every call has its own statement', async () => {
    const { ledger, statements } = countingLedger();
    const before = statements();
    for (let i = 0; i < 5; i++) expect((await ledger.admit({ graph: 'echo', input: { seq: i } })).created).toBe(true);
    expect(statements() - before).toBe(5);

    const off = countingLedger({ coalesceAdmissions: false });
    await Promise.all(Array.from({ length: 12 }, (_, i) => off.ledger.admit({ graph: 'echo', input: { off: i } })));
    expect(off.statements()).toBe(12);
  });

  it('a burst on one thread is admitted in call order; reject requests keep their own transaction', async () => {
    const { ledger } = countingLedger();
    const threadId = `c-thread-${randomBytes(3).toString('hex')}`;
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => ledger.admit({ graph: 'echo', input: { turn: i }, threadId })));
    const seqs = results.map((r) => r.job.seq);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    const busy = await ledger.admit({ graph: 'echo', input: {}, threadId, multitask: 'reject' }).catch((e: unknown) => e);
    expect(busy).toMatchObject({ code: 'THREAD_BUSY', activeJobId: results[0]!.job.jobId });
  });

  it('with encryption at rest, coalesced inputs are stored sealed and answered in plaintext', async () => {
    const crypto = AesGcmPayloadCodec.fromSpec(`k1:${randomBytes(32).toString('base64')}`);
    const { ledger } = countingLedger({ crypto });
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => ledger.admit({ graph: 'echo', input: { secret: `s${i}` } })));
    for (const [i, r] of results.entries()) expect(r.job.input).toEqual({ secret: `s${i}` });
    const raw = await db.ledger.pool.query('SELECT input FROM jobs WHERE job_id = ANY($1)', [results.map((r) => r.job.jobId)]);
    for (const r of raw.rows) expect(JSON.stringify(r.input)).not.toContain('secret');
  });

  it('concurrent recordEnqueued calls share one statement that appends events and leaves the jobs rows alone', async () => {
    const { ledger, statements } = countingLedger({}, 'record_enqueued');
    const jobs = await Promise.all(Array.from({ length: 6 }, (_, i) => ledger.admit({ graph: 'echo', input: { sent: i } })));
    const before = await Promise.all(jobs.map((r) => ledger.get(r.job.jobId)));
    await Promise.all(jobs.map((r) => ledger.recordEnqueued([{ jobId: r.job.jobId, deliveryId: r.job.jobId }])));
    expect(statements()).toBeLessThanOrEqual(2);
    for (const [i, r] of jobs.entries()) {
      expect(await ledger.get(r.job.jobId)).toEqual(before[i]);
      const events = await ledger.events(r.job.jobId);
      expect(events.map((e) => [e.type, e.detail])).toEqual([
        ['accepted', { graph: 'echo', threadId: r.job.threadId }],
        ['enqueued', { deliveryId: r.job.jobId }],
      ]);
    }
  });

  it('an enqueued event written after a worker claimed the delivery still carries the hand-over: attempt 0, token 0', async () => {
    const { job } = await db.ledger.admit({ graph: 'echo', input: { late: true } });
    const claim = await db.ledger.claim(job.jobId, 'w-early');
    expect(claim).toMatchObject({ ok: true });
    await db.ledger.recordEnqueued([{ jobId: job.jobId, deliveryId: job.jobId }]);
    const events = await db.ledger.events(job.jobId);
    expect(events.map((e) => [e.type, e.attempt, e.fencingToken])).toEqual([
      ['accepted', 0, 0],
      ['claimed', 1, 1],
      ['enqueued', 0, 0],
    ]);
  });

  it('concurrent markEnqueued calls share statements; of racing marks of one delivery exactly one records it', async () => {
    const { ledger } = countingLedger();
    const jobs = await Promise.all(Array.from({ length: 6 }, (_, i) => ledger.admit({ graph: 'echo', input: { mark: i } })));
    // Every job marked three times at once with the same delivery number: one caller wins each.
    const marks = jobs.flatMap((r) => [0, 1, 2].map(() => ({ jobId: r.job.jobId })));
    const out = await Promise.all(marks.map((m) => ledger.markEnqueued(m.jobId, 1, `${m.jobId}-d1`)));
    for (const r of jobs) expect(out.filter((won, i) => won && marks[i]!.jobId === r.job.jobId)).toHaveLength(1);
    for (const r of jobs) {
      expect(await ledger.get(r.job.jobId)).toMatchObject({ deliveries: 2, deliveryId: `${r.job.jobId}-d1` });
      expect((await ledger.events(r.job.jobId)).map((e) => e.type)).toEqual(['accepted', 'enqueued']);
    }
    // A stale delivery number records nothing.
    expect(await ledger.markEnqueued(jobs[0]!.job.jobId, 1, 'late')).toBe(false);
  });

  it('with coalescing off, 50 admissions racing in the server on one key (two bodies) still make one job', async () => {
    const settled = await withWidePool(db, 50, (wide) => {
      const alone = new Ledger(wide.pool, { coalesceAdmissions: false });
      return settle(Array.from({ length: 50 }, (_, i) => alone.admit({ graph: 'echo', input: { side: i % 2 }, idempotencyKey: 'c-server-race' })));
    });
    const ok = settled.flatMap((s, i) => (s.status === 'fulfilled' ? [{ side: i % 2, r: s.value }] : []));
    expect(ok).toHaveLength(25);
    expect(new Set(ok.map((o) => o.side)).size).toBe(1);
    expect(new Set(ok.map((o) => o.r.job.jobId)).size).toBe(1);
    expect(ok.filter((o) => o.r.created)).toHaveLength(1);
    expect(settled.filter((s) => s.status === 'rejected').every((s) => (s as PromiseRejectedResult).reason instanceof IdempotencyConflictError)).toBe(true);
    expect(await halfWritten()).toEqual([]);
  });
});
