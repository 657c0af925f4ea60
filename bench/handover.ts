// SIGTERM hand-over: the worker holding a long echo job's lease (steps of 500 ms) is sent
// SIGTERM; it stops the run at the next step boundary, releases the lease and redelivers the job.
// Each sample is the time from the signal until another worker's `claimed` event
// (bench/lib/hand-over.ts, the same chain as the SIGKILL recovery). Target: p95 ≤ 2 s.
import { benchSchema } from './bench-schema';
import { type BenchOptions, type Figure, size, summarizePercentile, withLimit } from './figures';
import { handOverTimes, STEP_MS } from './lib/hand-over';
import { benchQueueConfig } from './lib/processes';

const LIMIT_MS = 2_000;

export async function run(opts: BenchOptions): Promise<Figure[]> {
  const rounds = size(opts, { smoke: 2, quick: 10, full: 20 });
  const db = await benchSchema(opts, 'handover');
  try {
    const q = benchQueueConfig(opts.redisUrl ? 'redis' : 'postgres', opts.databaseUrl, db.schema, opts.redisUrl);
    const times = await handOverTimes({ db, queue: q, databaseUrl: opts.databaseUrl, signal: 'SIGTERM', rounds, roundTimeoutMs: 60_000 });
    const note = `${rounds} SIGTERMs, steps of ${STEP_MS} ms, drain grace 5 s (default); signal to another worker's claim`;
    return [
      summarizePercentile('SIGTERM hand-over, p50', 'ms', times, 50, note),
      withLimit(summarizePercentile('SIGTERM hand-over, p95', 'ms', times, 95, note), LIMIT_MS, `≤ ${LIMIT_MS} ms`),
    ];
  } finally {
    await db.drop();
  }
}
