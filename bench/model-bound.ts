// Model-bound concurrency (issue 40, part 2): many runs in flight on few worker processes, each
// a graph node awaiting a 2 s fake model call (`echo {steps: 1, sleepMs: 2000}`: one node that
// awaits a timer, no CPU). Per shape (1 process × 1,000 and 4 × 250; `MODEL_BOUND_SHAPES`, e.g.
// `1x1000,4x250`, picks others):
// - completions per second in the steady part of a batch of 4 × concurrency jobs (the slope of the
//   ledger's completed count from the first `concurrency` completions to 3 × concurrency) against
//   the ideal concurrency / 2 s; target ≥ 0.9×; with the worker's and Redis's CPU per job, the
//   machine's load average (the cores may be shared) and the leases lost (`recovery_required`);
// - RSS per in-flight run: each worker's VmRSS while every slot holds a run, less its RSS idle
//   after start, over the runs it holds;
// - PostgreSQL transactions per second per held lease while every slot holds a run (runs of
//   35 s, nothing claimed or finished in the window), and the same with the fleet idle:
//   pg_stat_database xact_commit + xact_rollback deltas of the bench's database over 15 s, taken
//   12 s after the last claim (a backend's counts can reach the view up to 10 s late). Every
//   statement the worker sends outside a saver transaction is one transaction, so in that window
//   transactions are statements. pg_stat_statements is not used: it needs
//   shared_preload_libraries. The database must not be used by anything else meanwhile (point
//   DATABASE_URL at a database of its own); the bench itself sends nothing in the window but
//   the two reads of the view, which are subtracted.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { benchSchema } from './bench-schema';
import { type BenchOptions, type Figure, holdAgainst, size, summarize } from './figures';
import { cpuDuring, redisPid } from './lib/cpu';
import { admitAndDeliver, Fleet } from './lib/fleet';
import { benchQueueConfig } from './lib/processes';

const LATENCY_MS = 2_000;
/** How long each held run waits, how long after the last claim the count starts, and its window. */
const HOLD = { smoke: { holdMs: 10_000, settleMs: 2_000, windowMs: 4_000 }, quick: { holdMs: 35_000, settleMs: 12_000, windowMs: 15_000 } };
const POLL_MS = 100;

interface Shape {
  processes: number;
  per: number;
}

/** `1x1000,4x250` → shapes; throws on anything else. */
export function parseShapes(spec: string): Shape[] {
  return spec.split(',').map((s) => {
    const m = /^\s*(\d+)x(\d+)\s*$/.exec(s);
    if (!m || Number(m[1]) < 1 || Number(m[2]) < 1) throw new Error(`MODEL_BOUND_SHAPES: "${s}" is not <processes>x<concurrency>, e.g. 1x1000,4x250`);
    return { processes: Number(m[1]), per: Number(m[2]) };
  });
}

function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+)\s+kB/m);
  if (!line) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(line[1]) / 1024;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Db = Awaited<ReturnType<typeof benchSchema>>;

async function counts(db: Db): Promise<{ completed: number; inFlight: number }> {
  const c = await db.ledger.countByStatus();
  return { completed: c.completed ?? 0, inFlight: (c.running ?? 0) + (c.starting ?? 0) };
}

/** Transactions of the current database so far (after dropping this session's cached snapshot). */
async function transactions(db: Db): Promise<number> {
  const client = await db.pool.connect();
  try {
    await client.query('SELECT pg_stat_clear_snapshot()');
    const r = await client.query('SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()');
    return Number(r.rows[0].n);
  } finally {
    client.release();
  }
}

/** Transactions per second of the database over the window, less the bench's own (a read is two: the snapshot's clear and the read). */
async function transactionRate(db: Db, windowMs: number): Promise<number> {
  const a = await transactions(db);
  await sleep(windowMs);
  const b = await transactions(db);
  return (b - a - 2) / (windowMs / 1000);
}

/**
 * Completions per second between `from` and `to` completed jobs of this batch, and the mean
 * runs in flight meanwhile; polls the ledger every 100 ms.
 */
async function steadyRate(db: Db, before: number, total: number, from: number, to: number) {
  let t0 = 0;
  let c0 = 0;
  const inFlight: number[] = [];
  const end = Date.now() + 300_000;
  for (;;) {
    const now = performance.now();
    const c = await counts(db);
    const done = c.completed - before;
    if (!t0 && done >= from) [t0, c0] = [now, done];
    else if (t0) inFlight.push(c.inFlight);
    if (t0 && done >= to)
      return {
        rate: (done - c0) / ((now - t0) / 1000),
        seconds: (now - t0) / 1000,
        inFlight: inFlight.reduce((a, b) => a + b, 0) / Math.max(1, inFlight.length),
      };
    if (done >= total || Date.now() > end) throw new Error(`batch ended before ${to} completions (${done} of ${total})`);
    await sleep(POLL_MS);
  }
}

async function waitFor(db: Db, what: string, ok: (c: { completed: number; inFlight: number }) => boolean, timeoutMs = 120_000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const c = await counts(db);
    if (ok(c)) return;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(c)}`);
    await sleep(POLL_MS);
  }
}

async function measureShape(opts: BenchOptions, shape: Shape, repeats: number, batchWaves: number): Promise<Figure[]> {
  const c = shape.processes * shape.per;
  const label = `${shape.processes} × c=${shape.per}`;
  const { holdMs, settleMs, windowMs } = opts.smoke ? HOLD.smoke : HOLD.quick;
  const db = await benchSchema(opts, 'model_bound', 4);
  try {
    const q = benchQueueConfig(opts.redisUrl ? 'redis' : 'postgres', opts.databaseUrl, db.schema, opts.redisUrl);
    // Several processes share 40 connections (10 each at 4), inside a default max_connections of 100 beside other users.
    const poolMax: Record<string, string> = shape.processes > 1 ? { WORKER_DB_POOL_MAX: String(Math.max(4, Math.floor(40 / shape.processes))) } : {};
    const fleet = await Fleet.start(db, q, opts.databaseUrl, shape.processes, shape.per, poolMax);
    const { queue } = fleet;
    try {
      const pids = fleet.procs.map((p) => p.child.pid!);
      await sleep(settleMs);
      const idleRss = pids.map(rssMiB);
      const idleRate = await transactionRate(db, windowMs);
      const rates: number[] = [];
      const shares: number[] = [];
      const perRun: number[] = [];
      const perLease: number[] = [];
      const fills: number[] = [];
      const cpu: string[] = [];
      const lost: number[] = [];
      for (let r = 0; r < repeats; r++) {
        const total = batchWaves * c;
        const before = (await counts(db)).completed;
        const admitted = admitAndDeliver(
          db.ledger,
          queue,
          Array.from({ length: total }, () => ({ graph: 'echo', input: { steps: 1, sleepMs: LATENCY_MS } })),
        );
        // Not PostgreSQL's: its backends opened during the window would count from zero.
        const groups = { worker: pids, ...(opts.redisUrl ? { redis: [await redisPid(opts.redisUrl)] } : {}) };
        const { result: steady, ms } = await cpuDuring(groups, () => steadyRate(db, before, total, c, (batchWaves - 1) * c));
        const jobs = steady.rate * steady.seconds;
        cpu.push(
          `${Object.entries(ms)
            .map(([k, v]) => `${k} ${(v / jobs).toFixed(1)}`)
            .join(', ')} ms CPU per job; load average ${os.loadavg()[0]!.toFixed(1)}`,
        );
        await admitted;
        rates.push(steady.rate);
        shares.push(steady.inFlight);
        console.log(`  [model-bound] ${label}: ${steady.rate.toFixed(1)} runs/s, ${steady.inFlight.toFixed(0)} in flight on average; ${cpu.at(-1)}`);
        await waitFor(db, 'the batch', (x) => x.completed - before >= total);
        // Every slot holds a run for 35 s: RSS and the database's statements while nothing is claimed.
        await admitAndDeliver(
          db.ledger,
          queue,
          Array.from({ length: c }, () => ({ graph: 'echo', input: { steps: 1, sleepMs: holdMs } })),
        );
        const t = performance.now();
        await waitFor(db, `${c} runs in flight`, (x) => x.inFlight >= c);
        fills.push((performance.now() - t) / 1000);
        await sleep(settleMs);
        const held = pids.map(rssMiB);
        perRun.push(...held.map((mib, i) => ((mib - idleRss[i]!) * 1024) / shape.per));
        perLease.push((await transactionRate(db, windowMs)) / c);
        await waitFor(db, 'the held runs', (x) => x.inFlight === 0, holdMs + 60_000);
        // Raw SQL is fine here: it is not product code.
        lost.push(Number((await db.pool.query("SELECT count(*) AS n FROM job_events WHERE type = 'recovery_required'")).rows[0].n));
      }
      const ideal = summarize(`ideal, ${label} (concurrency / ${LATENCY_MS / 1000} s)`, 'runs/s', [c / (LATENCY_MS / 1000)]);
      const note = `${batchWaves * c} jobs per repeat; runs in flight meanwhile ${shares.map((s) => s.toFixed(0)).join(', ')} (mean of 100 ms polls); ${cpu.join('; ')}`;
      return [
        ideal,
        holdAgainst(summarize(`model-bound completions, ${label}`, 'runs/s', rates, note), ideal, 0.9),
        summarize(`time to ${c} runs in flight, ${label}`, 's', fills, `${c} jobs admitted at once, to ${c} running or starting in the ledger`),
        summarize(
          `leases lost (recovery_required), ${label}`,
          'leases',
          lost,
          `over the batch and the held runs (${(batchWaves + 1) * c} jobs), summed over the repeats so far`,
        ),
        summarize(`worker RSS idle after start, ${label}`, 'MiB', idleRss),
        summarize(`worker RSS per in-flight run, ${label}`, 'KiB', perRun, `(RSS with ${shape.per} runs held − idle RSS) / ${shape.per}, per process`),
        summarize(`PostgreSQL transactions/s, ${label}, idle (no lease held)`, 'xact/s', [idleRate], `pg_stat_database deltas over ${windowMs / 1000} s`),
        summarize(
          `PostgreSQL transactions/s per held lease, ${label}`,
          'xact/s',
          perLease,
          `${c} leases held, pg_stat_database deltas over ${windowMs / 1000} s`,
        ),
      ];
    } finally {
      await fleet.stop();
    }
  } finally {
    await db.drop();
  }
}

export async function run(opts: BenchOptions): Promise<Figure[]> {
  const shapes = parseShapes(process.env.MODEL_BOUND_SHAPES ?? (opts.smoke ? '1x20' : '1x1000,4x250'));
  const repeats = size(opts, { smoke: 1, quick: 1, full: 3 });
  const figures: Figure[] = [];
  for (const shape of shapes) figures.push(...(await measureShape(opts, shape, repeats, 4)));
  return figures;
}
