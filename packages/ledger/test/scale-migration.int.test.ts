// Migrations 0012 and 0016 on a populated ledger (50k jobs, 200k events, effects): job_events becomes
// partitioned by day without losing or renumbering a row, jobs stays writable while job_events is
// being converted, the per-status counts are seeded exactly (without locking jobs) and then kept
// by the triggers, and retention drops a whole day of events by partition.
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import '../../../test/support/provided';
import { createPool, Ledger, listMigrations, migrate, pruneFinishedThreads } from '../src/index';

const JOBS = 50_000;
const url = inject('databaseUrl');
const schema = `t_scale_migration_${randomBytes(3).toString('hex')}`;
let pool: pg.Pool;

/** 50k finished jobs admitted over the last 10 days, four events each, one effect per tenth job. */
async function populate(): Promise<void> {
  await pool.query(
    `INSERT INTO jobs (job_id, tenant, request_hash, graph, thread_id, status, attempt, fencing_token, accepted_at, completed_at)
     SELECT 'm-' || i, CASE WHEN i % 3 = 0 THEN 'acme' ELSE 'default' END, md5(i::text), 'echo', 't-' || i,
            CASE WHEN i % 100 = 7 THEN 'failed' ELSE 'completed' END, 1, 1,
            now() - make_interval(secs => 864000 * (1 - i::double precision / $1)),
            now() - make_interval(secs => 864000 * (1 - i::double precision / $1)) + interval '1 second'
       FROM generate_series(1, $1) AS i`,
    [JOBS],
  );
  await pool.query(
    `INSERT INTO job_events (job_id, at, type, attempt, fencing_token)
     SELECT j.job_id, j.accepted_at + make_interval(secs => k), (ARRAY['accepted', 'enqueued', 'claimed', j.status])[k + 1], least(k, 1), least(k, 1)
       FROM jobs j, generate_series(0, 3) AS k ORDER BY j.accepted_at, k`,
  );
  await pool.query(
    `INSERT INTO effects (job_id, effect_key, name, status, idempotency_key, fencing_token)
     SELECT job_id, 'book', 'book', CASE WHEN seq % 20 = 0 THEN 'pending' ELSE 'committed' END, 'k-' || job_id, 1 FROM jobs WHERE seq % 10 = 0`,
  );
}

const rows = async (text: string, values: unknown[] = []) => (await pool.query(text, values)).rows;
const eventDigest = () =>
  rows(`SELECT count(*)::int AS n, sum(event_id)::text AS ids, md5(string_agg(job_id || type || at::text, ',' ORDER BY event_id)) AS body FROM job_events`);

beforeAll(async () => {
  await migrate({ connectionString: url, schema, upTo: 11 });
  pool = createPool({ connectionString: url, schema, max: 4 });
  await populate();
}, 120_000);
afterAll(() => pool.end());

describe('migration 0012 on a populated ledger', () => {
  it('partitions job_events keeping every row and id, leaves jobs writable meanwhile, and seeds exact counts', async () => {
    const before = await eventDigest();
    const lastEventId = Number((await rows('SELECT max(event_id) AS m FROM job_events'))[0].m);
    const counts = await rows(`SELECT tenant, status, count(*)::int AS n FROM jobs GROUP BY 1, 2 ORDER BY 1, 2`);

    // A reader holds job_events, so the migration stops at its first step on that table.
    const reader = await pool.connect();
    const writer = await pool.connect();
    try {
      await reader.query('BEGIN');
      await reader.query('SELECT 1 FROM job_events LIMIT 1');
      const migrating = migrate({ connectionString: url, schema });
      const blocked = async () =>
        (await rows(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%0012_flat_at_scale%'`))[0].n > 0;
      for (let i = 0; i < 200 && !(await blocked()); i++) await new Promise((r) => setTimeout(r, 50));
      expect(await blocked()).toBe(true);
      // While the migration waits inside its transaction, jobs takes writes (a lock on it would fail this at once).
      await writer.query("SET lock_timeout = '500ms'");
      const upd = await writer.query(`UPDATE jobs SET updated_at = now() WHERE job_id = 'm-1' RETURNING job_id`);
      expect(upd.rowCount).toBe(1);
      await reader.query('COMMIT');
      expect(await migrating).toEqual(
        listMigrations()
          .filter((m) => m.version > 11)
          .map((m) => m.version),
      );
    } finally {
      reader.release();
      writer.release();
    }

    expect(await eventDigest()).toEqual(before);
    const parts = await rows(`SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'job_events'::regclass`);
    expect(parts.map((p) => p.relname)).toEqual(expect.arrayContaining(['job_events_before', 'job_events_default']));
    expect(parts.length).toBeGreaterThanOrEqual(9); // + tomorrow and the six days after

    const ledger = new Ledger(pool);
    expect(await ledger.countByStatus('acme')).toEqual(Object.fromEntries(counts.filter((c) => c.tenant === 'acme').map((c) => [c.status, c.n])));
    const { job } = await ledger.admit({ graph: 'echo', input: {} });
    const events = await ledger.events(job.jobId);
    expect(events[0]?.eventId).toBeGreaterThan(lastEventId);
    await ledger.upkeep.sweep();
    const all = await ledger.countByStatus();
    expect(all).toEqual({ completed: JOBS - JOBS / 100, failed: JOBS / 100, accepted: 1 });
    expect(await rows(`SELECT status, sum(n)::int AS n FROM ledger_counts WHERE kind = 'effects' GROUP BY 1 ORDER BY 1`)).toEqual([
      { status: 'committed', n: 2_500 },
      { status: 'pending', n: 2_500 },
    ]);
    expect(Number((await rows('SELECT count(*) FROM ledger_counts'))[0].count)).toBe(7); // folded: one row per (kind, tenant, status)
  });

  it('keeps the counts exact through claims, completion, cancel and deletes', async () => {
    const ledger = new Ledger(pool);
    const before = await ledger.countByStatus();
    const a = (await ledger.admit({ graph: 'echo', input: { n: 1 } })).job.jobId;
    const b = (await ledger.admit({ graph: 'echo', input: { n: 2 } })).job.jobId;
    const claim = await ledger.claim(a, 'w', 60_000);
    if (!claim.ok) throw new Error('claim refused');
    await ledger.complete(a, claim.job.fencingToken, {});
    await ledger.cancel(b);
    await pool.query(`DELETE FROM jobs WHERE job_id = 'm-2'`);
    const truth = Object.fromEntries((await rows('SELECT status, count(*)::int AS n FROM jobs GROUP BY 1')).map((r) => [r.status, r.n]));
    expect(await ledger.countByStatus()).toEqual(truth);
    expect(truth.completed).toBe((before.completed ?? 0) + 1 - 1);
  });

  it('counts status changes row by row (0016) and adds nothing for updates that keep the status', async () => {
    const ledger = new Ledger(pool);
    await ledger.upkeep.sweep(); // folds: one row per (kind, tenant, status)
    const folded = Number((await rows('SELECT count(*) FROM ledger_counts'))[0].count);
    await pool.query(`UPDATE jobs SET updated_at = now() WHERE seq % 1000 = 1`); // 50 rows, no status change
    expect(Number((await rows('SELECT count(*) FROM ledger_counts'))[0].count)).toBe(folded);
    // One statement moving rows of two tenants from two statuses, and effects both ways.
    await pool.query(`UPDATE jobs SET status = CASE status WHEN 'failed' THEN 'completed' ELSE 'cancelled' END WHERE seq % 500 IN (7, 8)`);
    await pool.query(`UPDATE effects SET status = CASE status WHEN 'pending' THEN 'committed' ELSE 'pending' END
                      WHERE job_id IN (SELECT job_id FROM jobs WHERE seq % 40 IN (0, 10))`);
    const truth = Object.fromEntries((await rows('SELECT status, count(*)::int AS n FROM jobs GROUP BY 1')).map((r) => [r.status, r.n]));
    expect(await ledger.countByStatus()).toEqual(truth);
    expect(await ledger.countByStatus('acme')).toEqual(
      Object.fromEntries((await rows(`SELECT status, count(*)::int AS n FROM jobs WHERE tenant = 'acme' GROUP BY 1`)).map((r) => [r.status, r.n])),
    );
    const effects = await rows(`SELECT status, count(*)::int AS n FROM effects GROUP BY 1 ORDER BY 1`);
    expect(await rows(`SELECT status, sum(n)::int AS n FROM ledger_counts WHERE kind = 'effects' GROUP BY 1 HAVING sum(n) <> 0 ORDER BY 1`)).toEqual(effects);
  });

  it('drops whole days of events once they are older than the retention age', async () => {
    // Events of two days ago go to a day partition made for them, as a running ledger's would.
    await rows('SELECT ensure_job_event_partitions(0, 0)');
    await pool.query(`ALTER TABLE job_events DETACH PARTITION job_events_before`);
    await rows('SELECT ensure_job_event_partitions(3, 0)');
    await pool.query(`INSERT INTO job_events (job_id, at, type, attempt, fencing_token)
                      SELECT job_id, now() - interval '2 days', 'note', 1, 1 FROM jobs ORDER BY seq LIMIT 1000`);
    await pool.query('ANALYZE job_events');
    // No thread batches: only the day partitions (thread pruning is retention.int.test.ts's).
    const report = await pruneFinishedThreads(pool, { olderThanDays: 1, maxBatches: 0 });
    expect(report.eventPartitions).toBeGreaterThanOrEqual(1);
    expect(report.jobEvents).toBe(1000);
    expect(Number((await rows(`SELECT count(*) FROM job_events WHERE at < now() - interval '1 day'`))[0].count)).toBe(0);
    expect(Number((await rows('SELECT count(*) FROM jobs'))[0].count)).toBeGreaterThan(JOBS - 2); // job rows stay
  });
});
