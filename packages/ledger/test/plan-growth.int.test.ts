// A ledger that starts empty and grows fast (a fresh deployment, a bulk import) must not keep a
// plan made while `jobs` was small. A named statement's generic plan is kept on its connection
// until an ANALYZE of `jobs` invalidates it; one made on a few rows may hash-join a whole
// sequential scan of `jobs`, and a heartbeat or a delivery mark would then read every job each
// call. Here autovacuum is off for `jobs`, so nothing invalidates a plan: each statement runs
// more than five times on a tiny ledger (where PostgreSQL settles on a generic plan), 20,000
// jobs arrive, and the next call must not scan `jobs` (pg_stat_user_tables.seq_scan).
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDb, testDb } from '../../../test/support/db';
import { createPool, type Job } from '../src/index';

let db: TestDb;
let observer: pg.Pool;
let leased: Job;
let marked: Job;
let nextDelivery = 1;
/** Jobs waiting to be claimed, one per claim call. */
const fresh: Job[] = [];

/** Sequential scans of this schema's `jobs` so far, once the ledger's one backend has reported its counts. */
async function jobsSeqScans(): Promise<number> {
  await db.ledger.pool.query('SELECT pg_stat_force_next_flush()');
  // The ledger's backend reports when it next goes idle, before it answers; read on another connection.
  await db.ledger.pool.query('SELECT 1');
  const r = await observer.query("SELECT seq_scan FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = 'jobs'", [db.schema]);
  return Number(r.rows[0].seq_scan);
}

const calls: Record<string, () => Promise<unknown>> = {
  heartbeat: () => db.ledger.heartbeat('w-growth', [{ jobId: leased.jobId, token: 1 }]),
  markEnqueued: () => {
    const n = nextDelivery++;
    return db.ledger.markEnqueued(marked.jobId, n, `${marked.jobId}-d${n}`);
  },
  // Prepared, and each finds one job by its key: their generic plans stay on jobs_pkey.
  claim: () => db.ledger.claim(fresh.shift()!.jobId, 'w-growth', 600_000),
  get: () => db.ledger.get(leased.jobId),
  recordCheckpoint: () => db.ledger.recordCheckpoint(leased.jobId, 1),
};

beforeAll(async () => {
  // One connection: every named statement and its cached plan live on the same backend.
  db = await testDb('plan_growth', { poolSize: 1 });
  observer = createPool({ connectionString: db.url, schema: db.schema, max: 1 });
  await db.ledger.pool.query('ALTER TABLE jobs SET (autovacuum_enabled = false)');
  leased = (await db.ledger.admit({ graph: 'echo', input: {} })).job;
  marked = (await db.ledger.admit({ graph: 'echo', input: {} })).job;
  for (let i = 0; i < 9; i++) fresh.push((await db.ledger.admit({ graph: 'echo', input: { i } })).job);
  const claim = await db.ledger.claim(leased.jobId, 'w-growth', 600_000);
  if (!claim.ok) throw new Error(`claim refused: ${claim.reason}`);
  for (let i = 0; i < 8; i++) for (const call of Object.values(calls)) await call();
  await db.ledger.pool.query(`
    INSERT INTO jobs (job_id, request_hash, graph, thread_id, input, status, accepted_at, updated_at)
    SELECT 'grown-' || i, NULL, 'echo', 'grown-t-' || i, '{}'::jsonb, 'completed', now(), now()
      FROM generate_series(1, 20000) AS i`);
}, 60_000);
afterAll(async () => {
  await observer?.end();
  await db?.close();
});

describe('a ledger that grew after its statements were first planned', () => {
  it.each(Object.keys(calls))('%s finds its jobs by key, without scanning jobs', async (name) => {
    const before = await jobsSeqScans();
    await calls[name]!();
    expect(await jobsSeqScans()).toBe(before);
  });
});
