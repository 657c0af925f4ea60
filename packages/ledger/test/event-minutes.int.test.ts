// The dashboard's transitions chart from counted minutes (migration 0017): the buckets equal a
// raw count over job_events for windows across counted and uncounted time, with rows written with
// an explicit older `at` before and after the rollup's span; concurrent sweepers count each
// minute once; retention takes the minutes of dropped days; and 0017 applies on a ledger that
// already has events without locking job_events or jobs, its history then backfilled by sweeps.
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type TestDb, testDb } from '../../../test/support/db';
import { createPool, DashboardReads, Ledger, migrate, pruneFinishedThreads, type TimeWindow } from '../src/index';

const TYPES = ['accepted', 'claimed', 'completed', 'failed', 'recovery_required', 'manual_reconcile', 'interrupted', 'cancelled'];

/** The last `hours` hours as the dashboard cuts them (chartWindow): about 48 buckets of whole minutes, aligned to their width. */
function chartWindow(hours: number): TimeWindow {
  const bucketSeconds = Math.max(60, Math.ceil((hours * 3600) / 48 / 60) * 60);
  const end = Math.ceil(Date.now() / 1000 / bucketSeconds) * bucketSeconds * 1000;
  const count = Math.ceil((hours * 3600) / bucketSeconds);
  return { from: new Date(end - count * bucketSeconds * 1000), to: new Date(end), bucketSeconds };
}

/** What count_events_by_bucket.sql answered before migration 0017: every event of the window, counted. */
const RAW = `SELECT date_bin(make_interval(secs => $3::double precision), at, $1::timestamptz) AS bucket, type, count(*)::bigint AS count
               FROM job_events WHERE type = ANY ($4::text[]) AND at >= $1 AND at < $2 GROUP BY 1, 2 ORDER BY 1, 2`;

async function rawBuckets(pool: pg.Pool, w: TimeWindow) {
  const rows = (await pool.query(RAW, [w.from, w.to, w.bucketSeconds, TYPES])).rows;
  return rows.map((r) => ({ bucket: r.bucket as Date, type: r.type as string, count: Number(r.count) }));
}

/** The chart's buckets equal the raw count for the dashboard's windows and for one not cut in whole minutes. */
async function expectChartsExact(pool: pg.Pool): Promise<void> {
  const reads = new DashboardReads(pool);
  const odd: TimeWindow = { from: new Date(Date.now() - 7_200_000 - 1_234), to: new Date(Date.now() + 5_000), bucketSeconds: 45 };
  for (const w of [...[1, 3, 6, 24, 72, 720].map(chartWindow), odd]) {
    const raw = await rawBuckets(pool, w);
    expect(await reads.eventBuckets(w, TYPES)).toEqual(raw);
  }
}

/** Sweeps' rollup steps until there is nothing more to count now. */
async function rollUp(ledger: Ledger): Promise<void> {
  for (let i = 0; i < 1_000; i++) if (!(await ledger.upkeep.rollUpEventMinutes())) return;
  throw new Error('the rollup did not catch up in 1,000 steps');
}

const span = async (pool: pg.Pool) =>
  (await pool.query('SELECT rolled_from, rolled_to FROM event_minute_span')).rows[0] as { rolled_from: Date; rolled_to: Date };

/** Every counted minute equals a raw count of that minute, and the span holds no uncounted minute. */
async function expectMinutesExact(pool: pg.Pool): Promise<void> {
  const { rolled_from, rolled_to } = await span(pool);
  const counted = await pool.query('SELECT type, minute, n::int FROM event_minutes WHERE minute >= $1 AND minute < $2 ORDER BY 1, 2', [rolled_from, rolled_to]);
  const raw = await pool.query(
    `SELECT type, date_trunc('minute', at, 'UTC') AS minute, count(*)::int AS n FROM job_events
      WHERE at >= $1 AND at < $2 GROUP BY 1, 2 ORDER BY 1, 2`,
    [rolled_from, rolled_to],
  );
  expect(counted.rows).toEqual(raw.rows);
}

/** `count` events of the chart's types and two others, one every `everySeconds` back from `before` seconds ago. */
async function insertEvents(pool: pg.Pool, count: number, everySeconds: number, before = 0): Promise<void> {
  await pool.query(
    `INSERT INTO job_events (job_id, at, type, attempt, fencing_token)
     SELECT 'ev-' || (i % 97), now() - make_interval(secs => $3 + i * $2::double precision),
            (ARRAY['accepted', 'enqueued', 'claimed', 'completed', 'failed', 'checkpointed', 'recovery_required', 'cancelled', 'interrupted', 'manual_reconcile'])[i % 10 + 1], 1, 1
       FROM generate_series(0, $1 - 1) AS i`,
    [count, everySeconds, before],
  );
}

/** An empty timeline whose rollup span starts `minutesAgo` minutes ago, as on a ledger migrated then. */
async function resetTimeline(pool: pg.Pool, minutesAgo: number): Promise<void> {
  await pool.query('TRUNCATE job_events, event_minutes');
  await pool.query(`UPDATE event_minute_span SET rolled_from = m, rolled_to = m FROM date_trunc('minute', now() - make_interval(mins => $1), 'UTC') AS m`, [
    minutesAgo,
  ]);
}

describe('transitions chart from counted minutes', () => {
  let db: TestDb;
  beforeAll(async () => {
    db = await testDb('event_minutes');
  });
  afterAll(() => db?.close());

  it('equals the raw count across counted and uncounted time, with rows of earlier `at` before and after the span', async () => {
    const { pool } = db.ledger;
    await resetTimeline(pool, 180);
    await insertEvents(pool, 2_000, 10.7); // the last six hours
    await expectChartsExact(pool); // nothing counted yet: all from job_events

    // One step: an hour forward from three hours ago (and the backfill's first hour before it).
    expect(await db.ledger.upkeep.rollUpEventMinutes()).toBe(true);
    const first = await span(pool);
    expect(first.rolled_to.getTime() - first.rolled_from.getTime()).toBeGreaterThanOrEqual(3_600_000);
    await expectChartsExact(pool);
    await expectMinutesExact(pool);

    await rollUp(db.ledger);
    const done = await span(pool);
    expect(done.rolled_from.getTime()).toBeLessThanOrEqual(Date.now() - 1_999 * 10.7 * 1000); // the oldest event
    expect(done.rolled_to.getTime()).toBeGreaterThan(Date.now() - 3 * 60_000);
    await expectChartsExact(pool);
    await expectMinutesExact(pool);

    // Written later with an `at` before the span (history) and within the last minute: read raw, then counted.
    await insertEvents(pool, 300, 7, 9 * 3600);
    await insertEvents(pool, 40, 1);
    await expectChartsExact(pool);
    // A process looks for older events when it starts and after each minute it counts forward.
    await rollUp(new Ledger(pool));
    expect((await span(pool)).rolled_from.getTime()).toBeLessThanOrEqual(Date.now() - (9 * 3600 + 299 * 7) * 1000);
    await expectChartsExact(pool);
    await expectMinutesExact(pool);
  });

  it('counts every minute once with four sweepers at the same time', async () => {
    const { pool } = db.ledger;
    await resetTimeline(pool, 600);
    await insertEvents(pool, 5_000, 9); // the last 12.5 hours: a backfill and ten forward steps
    const sweepers = Array.from({ length: 4 }, () => new Ledger(pool));
    await Promise.all(
      sweepers.map(async (s) => {
        for (let i = 0; i < 30; i++) await s.upkeep.sweep();
      }),
    );
    await rollUp(sweepers[0]!);
    const { rolled_from, rolled_to } = await span(pool);
    const total = await pool.query(
      'SELECT (SELECT sum(n)::int FROM event_minutes) AS counted, (SELECT count(*)::int FROM job_events WHERE at >= $1 AND at < $2) AS raw',
      [rolled_from, rolled_to],
    );
    expect(total.rows[0].counted).toBe(total.rows[0].raw);
    await expectMinutesExact(pool);
    await expectChartsExact(pool);
  });

  it('forgets the minutes of dropped job_events days, and the chart still equals the raw count', async () => {
    const { pool } = db.ledger;
    await resetTimeline(pool, 60);
    await pool.query('SELECT ensure_job_event_partitions(4, 7)');
    await insertEvents(pool, 500, 600); // one every 10 minutes for 83 hours
    await rollUp(db.ledger);
    const before = await pool.query("SELECT count(*)::int AS n FROM event_minutes WHERE minute < now() - interval '2 days'");
    expect(before.rows[0].n).toBeGreaterThan(0);

    const report = await pruneFinishedThreads(pool, { olderThanDays: 1, checkpoints: 'all' });
    expect(report.eventPartitions).toBeGreaterThanOrEqual(2);
    const oldest = await pool.query(
      `SELECT min(substring(pg_get_expr(c.relpartbound, c.oid) FROM $r$FROM \\('([^']+)'\\)$r$)::timestamptz) AS at
         FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'job_events'::regclass AND pg_get_expr(c.relpartbound, c.oid) <> 'DEFAULT'`,
    );
    const bound = oldest.rows[0].at as Date;
    expect(bound.getTime()).toBeGreaterThan(Date.now() - 2 * 86_400_000);
    expect((await span(pool)).rolled_from.getTime()).toBe(bound.getTime());
    const left = await pool.query('SELECT count(*)::int AS n FROM event_minutes WHERE minute < $1', [bound]);
    expect(left.rows[0].n).toBe(0);
    await expectChartsExact(pool);
    await rollUp(db.ledger); // nothing older left to backfill
    expect((await span(pool)).rolled_from.getTime()).toBe(bound.getTime());
    await expectMinutesExact(pool);
  });
});

describe('migration 0017 on a ledger with events', () => {
  const url = inject('databaseUrl');
  const schema = `t_event_minutes_migration_${randomBytes(3).toString('hex')}`;
  let pool: pg.Pool;
  beforeAll(async () => {
    // Up to 0016, whose trigger DDL on jobs waits for open writers like any trigger change.
    await migrate({ connectionString: url, schema, upTo: 16 });
    pool = createPool({ connectionString: url, schema, max: 6 });
  });
  afterAll(() => pool?.end());

  it('applies while jobs and job_events take writes, and the sweep backfills the history', async () => {
    await insertEvents(pool, 20_000, 13); // three days
    await pool.query(
      `INSERT INTO jobs (job_id, request_hash, graph, thread_id, status, attempt, fencing_token) VALUES ('m-open', 'h', 'echo', 't', 'accepted', 0, 0)`,
    );
    // A writer holds its row locks on both tables, uncommitted, while the migration runs.
    const writer = await pool.connect();
    try {
      await writer.query('BEGIN');
      await writer.query(`INSERT INTO job_events (job_id, type, attempt, fencing_token) VALUES ('m-open', 'accepted', 0, 0)`);
      await writer.query(`UPDATE jobs SET updated_at = now() WHERE job_id = 'm-open'`);
      const migrating = migrate({ connectionString: url, schema, upTo: 17 });
      const outcome = await Promise.race([migrating, new Promise((r) => setTimeout(() => r('waited'), 15_000))]);
      expect(outcome).toEqual(expect.arrayContaining([17]));
      await writer.query('COMMIT');
    } finally {
      writer.release();
    }
    expect(Number((await pool.query('SELECT count(*) FROM event_minutes')).rows[0].count)).toBe(0);
    await expectChartsExact(pool); // nothing counted yet: all from job_events

    const ledger = new Ledger(pool);
    await rollUp(ledger);
    expect((await span(pool)).rolled_from.getTime()).toBeLessThanOrEqual(Date.now() - 20_000 * 13 * 1000 + 60_000);
    await expectMinutesExact(pool);
    await expectChartsExact(pool);
  });
});
