// Concurrent claims: one winner per job, one lease per thread, and a thread's jobs in admission order.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sleep, type TestDb, testDb } from '../../../test/support/db';
import type { ClaimResult } from '../src/index';
import { sql } from '../src/sql';
import { backdateLease, deferred, settledWithin, warmPool, withWidePool } from './support/jobs';

let db: TestDb;
beforeAll(async () => {
  db = await testDb('claim_race', { poolSize: 30 });
  await warmPool(db.ledger.pool, 26);
});
afterAll(() => db.close());

const winners = (results: ClaimResult[]) => results.filter((r) => r.ok);

/** Leased jobs per thread right now; more than one is the bug this file hunts. */
async function doublyLeasedThreads(): Promise<unknown[]> {
  const r = await db.ledger.pool.query(
    "SELECT tenant, thread_id, count(*) FROM jobs WHERE status IN ('starting', 'running') GROUP BY tenant, thread_id HAVING count(*) > 1",
  );
  return r.rows;
}

describe('claim', () => {
  it('50 concurrent claims of one job have exactly one winner, each round', async () => {
    const { ledger } = db;
    const { job } = await ledger.admit({ graph: 'echo', input: {} });
    // 50 connections, so all 50 claims are in flight in the server at once.
    const rounds = await withWidePool(db, 50, async (wide) => {
      const out: ClaimResult[][] = [];
      for (let round = 1; round <= 3; round++) {
        out.push(await Promise.all(Array.from({ length: 50 }, (_, i) => wide.claim(job.jobId, `w${i}`, 60_000))));
        // The winner's lease expires (a dead worker): the next round races for the re-claim.
        await backdateLease(ledger.pool, job.jobId);
      }
      return out;
    });
    for (const [i, results] of rounds.entries()) {
      const round = i + 1;
      const won = winners(results);
      expect(won).toHaveLength(1);
      expect(won[0]?.ok && won[0].job.fencingToken).toBe(round);
      expect(results.filter((r) => !r.ok).every((r) => !r.ok && r.reason === 'lease_held')).toBe(true);
    }
    const claimed = (await ledger.events(job.jobId)).filter((e) => e.type === 'claimed');
    expect(claimed.map((e) => e.fencingToken)).toEqual([1, 2, 3]);
    const after = await ledger.get(job.jobId);
    expect(after).toMatchObject({ fencingToken: 3, attempt: 3, status: 'starting' });
  });

  it('two jobs of one thread never hold leases together, and the later waits for the earlier', async () => {
    const { ledger } = db;
    const threadId = 'thread-hammer';
    const { job: a } = await ledger.admit({ graph: 'echo', input: { n: 'a' }, threadId });
    const { job: b } = await ledger.admit({ graph: 'echo', input: { n: 'b' }, threadId });
    let bClaims = 0;
    for (let round = 0; round < 15; round++) {
      // Tiny leases so that A's lease keeps expiring and both jobs look claimable by the clock.
      const claims = Array.from({ length: 24 }, (_, i) => ledger.claim(i % 2 ? a.jobId : b.jobId, `w${i}`, 1 + (i % 5)));
      const [results, doubled] = await Promise.all([Promise.all(claims), doublyLeasedThreads()]);
      expect(doubled).toEqual([]);
      bClaims += results.filter((r, i) => i % 2 === 0 && r.ok).length;
      const refusedB = results.filter((r, i) => i % 2 === 0 && !r.ok);
      expect(refusedB.every((r) => !r.ok && r.reason === 'thread_busy' && r.blockedBy === a.jobId)).toBe(true);
      // With 1–5 ms leases several claims of A may win in one round, each after the last expired.
      const tokens = winners(results).map((r) => (r.ok ? r.job.fencingToken : 0));
      expect(new Set(tokens).size).toBe(tokens.length);
      await sleep(6);
    }
    expect(bClaims).toBe(0);
    const aNow = await ledger.get(a.jobId);
    expect((await ledger.events(a.jobId)).filter((e) => e.type === 'claimed')).toHaveLength(aNow.fencingToken);
    expect((await ledger.get(b.jobId)).status).toBe('accepted');

    // A finishes; now B, and only B, is claimable, by exactly one of many.
    await backdateLease(ledger.pool, a.jobId);
    const finisher = await ledger.claim(a.jobId, 'finisher', 60_000);
    if (!finisher.ok) throw new Error(`could not take A over: ${finisher.reason}`);
    await ledger.complete(a.jobId, finisher.job.fencingToken, { ok: true });
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => ledger.claim(b.jobId, `w${i}`, 60_000)));
    expect(winners(results)).toHaveLength(1);
    const aDone = (await ledger.events(a.jobId)).find((e) => e.type === 'completed');
    const bClaimed = (await ledger.events(b.jobId)).filter((e) => e.type === 'claimed');
    expect(bClaimed).toHaveLength(1);
    expect(bClaimed[0]!.eventId).toBeGreaterThan(aDone!.eventId);
  });

  it('keeps the later job waiting while the earlier is parked, and frees it once the earlier is cancelled', async () => {
    const { ledger } = db;
    const threadId = 'thread-order';
    const { job: a } = await ledger.admit({ graph: 'echo', input: {}, threadId });
    const { job: b } = await ledger.admit({ graph: 'echo', input: {}, threadId });
    expect(await ledger.claim(b.jobId, 'w1')).toMatchObject({ ok: false, reason: 'thread_busy', blockedBy: a.jobId });
    const claimA = await ledger.claim(a.jobId, 'w1');
    if (!claimA.ok) throw new Error('claim of A refused');
    await ledger.park(a.jobId, claimA.job.fencingToken, { ask: 'approve?' });
    expect(await ledger.claim(b.jobId, 'w2')).toMatchObject({ ok: false, reason: 'thread_busy', blockedBy: a.jobId });
    await ledger.cancel(a.jobId);
    expect(await ledger.claim(b.jobId, 'w2')).toMatchObject({ ok: true, job: { status: 'starting', fencingToken: 1 } });
  });

  it('refuses an earlier job that committed late while a later job holds the thread (unique index)', async () => {
    const { ledger } = db;
    const threadId = 'thread-late-commit';
    const late = new pg.Client({ connectionString: db.url, options: `-c search_path=${db.schema}` });
    await late.connect();
    const holder = new pg.Client({ connectionString: db.url, options: `-c search_path=${db.schema}` });
    await holder.connect();
    try {
      // A gets the smaller seq but commits after B; B is claimed in a transaction held open.
      await late.query('BEGIN');
      const { job: a } = await ledger.admit({ graph: 'echo', input: { n: 'a' }, threadId }, late);
      const { job: b } = await ledger.admit({ graph: 'echo', input: { n: 'b' }, threadId });
      expect(a.seq).toBeLessThan(b.seq);
      await holder.query('BEGIN');
      const bClaim = await holder.query(sql('claim_lease'), [b.jobId, 'wb', 60_000, null, null]);
      expect(bClaim.rows).toHaveLength(1);
      await late.query('COMMIT');
      // A's snapshot sees B still accepted, so only the unique index can stop this claim.
      const gate = deferred();
      const aClaim = ledger.claim(a.jobId, 'wa').finally(() => gate.resolve());
      expect(await settledWithin(gate.promise, 150)).toBe('pending');
      await holder.query('COMMIT');
      expect(await aClaim).toEqual({ ok: false, reason: 'thread_busy' });
      expect((await ledger.get(a.jobId)).status).toBe('accepted');
      expect(await doublyLeasedThreads()).toEqual([]);
    } finally {
      await late.end();
      await holder.end();
    }
  });
});
