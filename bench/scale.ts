// Cost as the ledger grows (`npm run bench -- --scale`): the same measurements on an empty ledger
// (with a page of finished vacation jobs, so `?graph=vacation` reads 50 rows at every size),
// then after loading synthetic finished jobs (events and checkpoints included,
// bench/lib/scale-load.ts) up to each size of SCALE_JOBS (default 1,000,000 and 10,000,000),
// side by side. One schema grows tier by tier; one producer process (`apps/producer/src/main.ts`)
// serves it throughout.
// Measured at each tier: admission (POST /v1/jobs, 64 connections, autocannon), claim latency,
// list pages, GET /admin, GET /metrics, a reconciler sweep, retention (dropping a day's job_events
// partition; one 500-thread checkpoint batch) and storage per job. Targets: each within 1.5× of
// empty (admission: ≥ 1/1.5 of its req/s). Retention is reported, not judged: the empty ledger
// has nothing to prune (compare its figures between the loaded sizes). Jobs admitted by a tier's
// admission run are settled as completed afterwards, so every tier starts with no backlog. Migration 0012 on a populated
// ledger: `bench/lib/migration-lock.ts`.
import { randomBytes } from 'node:crypto';
import { statfsSync } from 'node:fs';
import autocannon from 'autocannon';
import { createPool, freePort, isPortOpen, Ledger, migrate, pruneFinishedThreads, storageStats } from '../packages/ledger/src/index';
import { type BenchOptions, type Figure, holdAgainst, percentile, summarize } from './figures';
import { benchQueueConfig, type Proc, spawnScript, stop } from './lib/processes';
import { emptyRedisQueue } from './lib/queues';
import { loadFinishedJobs } from './lib/scale-load';

const TARGET = 1.5;
const DAYS = 10;
const KEEP_FREE_BYTES = 30 * 2 ** 30;
/** Bytes one loaded job takes with its events and checkpoints, indexes included (measured at 1M: about 2.3 kB; rounded up). */
const BYTES_PER_JOB = 3_000;

const tierName = (size: number) => (size >= 1e6 ? `${size / 1e6}M` : size >= 1e4 ? `${size / 1e3}k` : size.toLocaleString('en'));

const tiers = (opts: BenchOptions): number[] =>
  opts.smoke ? [2_000] : (process.env.SCALE_JOBS ?? '1000000,10000000').split(',').map((s) => Number(s.replaceAll('_', '')));

const ms = (t: bigint) => Number(process.hrtime.bigint() - t) / 1e6;

async function timed(n: number, op: () => Promise<unknown>): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await op();
    samples.push(ms(t));
  }
  return samples;
}

async function get(port: number, path: string): Promise<void> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  await res.arrayBuffer();
  if (!res.ok) throw new Error(`GET ${path}: ${res.status}`);
}

/** One tier's figures, named `<what> @ <size>`. */
async function measure(tier: string, port: number, ledger: Ledger, seconds: number, repeats: number): Promise<Figure[]> {
  const name = (what: string) => `${what} @ ${tier}`;
  const figures: Figure[] = [];
  await autocannon({
    url: `http://127.0.0.1:${port}/v1/jobs`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"graph":"echo","input":{}}',
    connections: 64,
    duration: 1,
  });
  const r = await autocannon({
    url: `http://127.0.0.1:${port}/v1/jobs`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ graph: 'echo', input: { steps: 2 } }),
    connections: 64,
    duration: seconds,
  });
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`admission: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
  figures.push(summarize(name('POST /v1/jobs, 64 connections'), 'req/s', [r.requests.average], `${seconds} s, autocannon`));
  // Settle the backlog the admission run left (echo jobs on top of the ledger, as after a busy hour).
  await ledger.pool.query(`UPDATE jobs SET status = 'completed', completed_at = now() WHERE status = 'accepted'`);

  // Claim: a fresh job each, on its own thread, claimed by a worker id; completed afterwards.
  const claims: number[] = [];
  for (let i = 0; i < repeats * 10; i++) {
    const { job } = await ledger.admit({ graph: 'echo', input: {} });
    const t = process.hrtime.bigint();
    const c = await ledger.claim(job.jobId, 'scale-bench', 60_000);
    claims.push(ms(t));
    if (!c.ok) throw new Error(`claim of ${job.jobId} refused: ${c.reason}`);
    await ledger.complete(job.jobId, c.job.fencingToken, {});
  }
  figures.push(summarize(name('claim (claim_lease.sql)'), 'ms', claims, `p95 ${percentile(claims, 95).toFixed(2)} ms`));
  for (const path of [
    '/v1/jobs?limit=50',
    '/v1/jobs?status=running',
    '/v1/jobs?graph=vacation&limit=50',
    '/admin',
    '/metrics',
    '/admin/api/transitions?hours=24',
    '/admin/api/transitions?hours=720',
  ]) {
    await get(port, path);
    figures.push(summarize(name(`GET ${path}`), 'ms', await timed(repeats * 5, () => get(port, path))));
  }
  figures.push(summarize(name('reconciler sweep (ledger.sweep)'), 'ms', await timed(repeats * 5, () => ledger.upkeep.sweep())));
  // Retention: the day partitions older than 9 days (the oldest day of the load, none when empty),
  // then one batch of 500 finished threads whose checkpoints go but the latest (job rows kept, so
  // the figures compare with earlier runs).
  let t = process.hrtime.bigint();
  const dropped = await pruneFinishedThreads(ledger.pool, { olderThanDays: DAYS - 1, maxBatches: 0 });
  figures.push(
    summarize(name('retention: drop day partitions of job_events'), 'ms', [ms(t)], `${dropped.eventPartitions} partitions, ~${dropped.jobEvents} events`),
  );
  t = process.hrtime.bigint();
  const batch = await pruneFinishedThreads(ledger.pool, { olderThanDays: DAYS - 1, checkpoints: 'last', jobs: 'keep', maxBatches: 1, batchSize: 500 });
  figures.push(summarize(name('retention: one 500-thread checkpoint batch'), 'ms', [ms(t)], `${batch.threads} threads, ${batch.checkpoints} checkpoints`));
  const tables = await storageStats(ledger.pool);
  const jobs = tables.find((x) => x.table === 'jobs')?.rows ?? 0;
  const bytes = tables.reduce((s, x) => s + x.bytes, 0);
  figures.push(
    summarize(name('storage per job (all tables and indexes)'), 'bytes', [jobs ? bytes / jobs : 0], `${jobs} jobs, ${(bytes / 2 ** 20).toFixed(0)} MiB`),
  );
  return figures;
}

/**
 * Loads the ledger from `loaded` to `size` jobs and brings it to the steady state a live ledger
 * would be in: vacuumed and analysed (autovacuum would have; a freshly loaded heap has no hint
 * bits or visibility map, so its first reader writes every page it reads), and the chart's
 * minutes counted from scratch, as a fresh migration 0017 on a populated ledger would (the load
 * writes `at` values inside a span already counted, which the rollup never recounts).
 */
async function load(ledger: Ledger, loaded: number, size: number): Promise<Figure[]> {
  const { pool } = ledger;
  const started = Date.now();
  // Day partitions for the days the load spreads over (a live ledger makes them day by day; retention dropped the oldest).
  await pool.query('SELECT ensure_job_event_partitions($1, 7)', [DAYS + 1]);
  await loadFinishedJobs(pool, { from: loaded, count: size - loaded, days: DAYS, total: size }, (line) => console.log(`[scale] ${line}`));
  await pool.query('VACUUM ANALYZE jobs, checkpoints, checkpoint_blobs, checkpoint_writes');
  await pool.query('ANALYZE job_events');
  const tier = tierName(size);
  const figures = [summarize(`load to ${size.toLocaleString('en')} jobs (INSERT … SELECT, VACUUM ANALYZE)`, 's', [(Date.now() - started) / 1000])];
  await pool.query('TRUNCATE event_minutes');
  await pool.query("UPDATE event_minute_span SET (rolled_from, rolled_to) = (SELECT m, m FROM date_trunc('minute', now() - interval '1 minute', 'UTC') AS m)");
  const rollup = Date.now();
  let steps = 0;
  // A fresh Ledger, as a process starting on the migrated ledger: it backfills from its first call.
  const counter = new Ledger(pool);
  while (await counter.upkeep.rollUpEventMinutes()) steps++;
  figures.push(summarize(`chart rollup: backfill the loaded history (${DAYS} days) to ${tier}`, 's', [(Date.now() - rollup) / 1000], `${steps + 1} steps`));
  return figures;
}

export async function run(opts: BenchOptions): Promise<Figure[]> {
  if (!opts.redisUrl) throw new Error('scale needs Redis (the producer delivers through BullMQ)');
  const seconds = opts.smoke ? 1 : 10;
  const repeats = opts.smoke ? 1 : 6;
  const schema = `bench_scale_${randomBytes(3).toString('hex')}`;
  await migrate({ connectionString: opts.databaseUrl, schema });
  const pool = createPool({ connectionString: opts.databaseUrl, schema, max: 4 });
  const ledger = new Ledger(pool);
  const port = await freePort();
  const { prefix = '' } = benchQueueConfig('redis', opts.databaseUrl, schema, opts.redisUrl);
  let producer: Proc | undefined;
  try {
    producer = spawnScript('apps/producer/src/main.ts', {
      ...process.env,
      DATABASE_URL: opts.databaseUrl,
      DB_SCHEMA: schema,
      REDIS_URL: opts.redisUrl,
      QUEUE_BACKEND: 'redis',
      QUEUE_PREFIX: prefix,
      PORT: String(port),
      LOG_LEVEL: 'warn',
    });
    for (let end = Date.now() + 60_000; !(await isPortOpen(port)); await new Promise((r) => setTimeout(r, 100))) {
      if (producer.child.exitCode !== null || Date.now() > end) throw new Error(`producer did not start:\n${producer.output().slice(-2000)}`);
    }
    // One page of vacation jobs (settled as completed with the admission backlog in `measure`).
    for (let i = 0; i < 50; i++) await ledger.admit({ graph: 'vacation', input: {} });
    await measure('warm-up', port, ledger, 1, 1); // JIT, pools, plans: not counted
    const empty = await measure('0', port, ledger, seconds, repeats);
    const figures = [...empty];
    let loaded = 0;
    const sizes = tiers(opts);
    for (const size of sizes) {
      const { bavail, bsize } = statfsSync('/');
      if (bavail * bsize - (size - loaded) * BYTES_PER_JOB < KEEP_FREE_BYTES) {
        console.log(`[scale] skipping ${size.toLocaleString('en')} jobs: loading would leave under 30 GB free`);
        break;
      }
      figures.push(...(await load(ledger, loaded, size)));
      loaded = size;
      const tier = tierName(size);
      // As on the empty ledger: one pass not counted, so the tier is measured with the pages it
      // reads in memory (the load, its VACUUM and the chart's backfill have just read gigabytes).
      await measure(`warm-up ${tier}`, port, ledger, 1, 1);
      for (const f of await measure(tier, port, ledger, seconds, repeats)) {
        const base = empty.find((e) => e.name.replace(/ @ 0$/, '') === f.name.replace(/ @ .*$/, ''));
        const timing = f.unit === 'ms' && !f.name.startsWith('retention');
        if (base && f.unit === 'req/s') figures.push({ ...holdAgainst(f, base, 1 / TARGET, 'higher'), targetText: `≥ 1/${TARGET}×` });
        else if (base && timing) figures.push(holdAgainst(f, base, TARGET, 'lower'));
        else figures.push(f);
      }
    }
    return figures;
  } finally {
    if (producer) await stop(producer);
    await emptyRedisQueue(opts.redisUrl, prefix).catch(() => {});
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch((err: Error) => console.error(`[scale] could not drop ${schema}: ${err.message}`));
    await pool.end();
  }
}
