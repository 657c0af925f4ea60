// Migration 0012 on a populated ledger (`npm run bench -- scale-migration`, also run by --scale):
// a schema migrated up to 0011 and loaded with SCALE_MIGRATION_JOBS finished jobs (default
// 1,000,000; bench/lib/scale-load.ts), then migrate() while two probes write every 10 ms: an
// UPDATE of a jobs row and an INSERT into job_events. The longest probe write is the longest
// lock each table saw. Rows of jobs and job_events are counted before and after.
// SCALE_MIGRATION_SCHEMA names an already loaded schema at 0011 to use instead (kept afterwards).
import { randomBytes } from 'node:crypto';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import type pg from 'pg';
import { createPool, migrate } from '../packages/ledger/src/index';
import type { BenchOptions, Figure } from './figures';
import { summarize } from './figures';
import { loadFinishedJobs } from './lib/scale-load';

/** Runs `probe` every 10 ms until `stop` resolves; returns the longest time one probe took (ms). */
async function longestWrite(pool: pg.Pool, text: string, values: unknown[], done: Promise<unknown>): Promise<number> {
  let stopped = false;
  void done.finally(() => {
    stopped = true;
  });
  let longest = 0;
  while (!stopped) {
    const t = process.hrtime.bigint();
    await pool.query(text, values);
    longest = Math.max(longest, Number(process.hrtime.bigint() - t) / 1e6);
    await new Promise((r) => setTimeout(r, 10));
  }
  return longest;
}

export async function run(opts: BenchOptions): Promise<Figure[]> {
  const given = process.env.SCALE_MIGRATION_SCHEMA;
  const jobs = opts.smoke ? 2_000 : Number(process.env.SCALE_MIGRATION_JOBS ?? 1_000_000);
  const schema = given ?? `bench_scale_mig_${randomBytes(3).toString('hex')}`;
  const pool = createPool({ connectionString: opts.databaseUrl, schema, max: 4 });
  try {
    if (!given) {
      await migrate({ connectionString: opts.databaseUrl, schema, upTo: 11 });
      await new PostgresSaver(pool, undefined, { schema }).setup();
      await loadFinishedJobs(pool, { from: 0, count: jobs, days: 10, total: jobs }, (line) => console.log(`[scale-migration] ${line}`));
      await pool.query('VACUUM ANALYZE jobs');
    }
    const count = async () =>
      (await pool.query('SELECT (SELECT count(*) FROM jobs)::bigint AS jobs, (SELECT count(*) FROM job_events)::bigint AS events')).rows[0];
    const before = await count();
    const first = (await pool.query('SELECT job_id FROM jobs ORDER BY seq LIMIT 1')).rows[0].job_id as string;
    const t = process.hrtime.bigint();
    const migrating = migrate({ connectionString: opts.databaseUrl, schema });
    const [applied, jobsLock, eventsLock] = await Promise.all([
      migrating,
      longestWrite(pool, 'UPDATE jobs SET updated_at = now() WHERE job_id = $1', [first], migrating),
      longestWrite(pool, `INSERT INTO job_events (job_id, type, attempt, fencing_token) VALUES ($1, 'probe', 0, 0)`, [first], migrating),
    ]);
    const total = Number(process.hrtime.bigint() - t) / 1e6;
    await pool.query(`DELETE FROM job_events WHERE type = 'probe'`);
    const after = await count();
    const lost = { jobs: Number(before.jobs) - Number(after.jobs), events: Number(before.events) - Number(after.events) };
    if (!applied.includes(12)) throw new Error(`migration 0012 was not applied (applied: ${applied.join(', ') || 'none'})`);
    const note = `${Number(before.jobs).toLocaleString('en')} jobs, ${Number(before.events).toLocaleString('en')} events; rows lost: jobs ${lost.jobs}, events ${lost.events}`;
    return [
      summarize('migrate() to 0012 on a populated ledger, total (incl. seeding counts and concurrent index builds)', 'ms', [total], note),
      summarize('longest UPDATE of a jobs row during the migration', 'ms', [jobsLock]),
      summarize('longest INSERT into job_events during the migration', 'ms', [eventsLock]),
      summarize('rows lost (jobs + events)', 'rows', [lost.jobs + lost.events]),
    ];
  } finally {
    if (!given) await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => {});
    await pool.end();
  }
}
