// End-to-end runs per second of `echo` (2 steps) through one worker process at concurrency 16
// (admission, delivery, claim, fenced checkpoints, completion), held against the bare loop:
// the same graph with LangGraph's unfenced PostgresSaver, invoked 16 at a time in one process
// (bench/procs/bare-invoke.ts). Both are real processes with the same pool size; repeats
// alternate between them. Target: ≥ 0.8× the bare loop.
import { benchSchema } from './bench-schema';
import { type BenchOptions, type Figure, holdAgainst, size, summarize } from './figures';
import { Fleet } from './lib/fleet';
import { benchQueueConfig, startHelper } from './lib/processes';

const CONCURRENCY = 16;
const TARGET = 0.8;

export async function run(opts: BenchOptions): Promise<Figure[]> {
  const runs = size(opts, { smoke: 48, quick: 400, full: 2_000 });
  const repeats = size(opts, { smoke: 2, quick: 3, full: 5 });
  const db = await benchSchema(opts, 'e2e');
  const q = benchQueueConfig(opts.redisUrl ? 'redis' : 'postgres', opts.databaseUrl, db.schema, opts.redisUrl);
  const fleet = await Fleet.start(db, q, opts.databaseUrl, 1, CONCURRENCY);
  const bare = startHelper('bare-invoke.ts', { DATABASE_URL: opts.databaseUrl, DB_SCHEMA: db.schema, CONCURRENCY: String(CONCURRENCY) });
  try {
    await fleet.batch(CONCURRENCY * 4, 'echo', () => ({ steps: 2 })); // warm-up, not counted
    const worker: number[] = [];
    const loop: number[] = [];
    for (let r = 0; r < repeats; r++) {
      loop.push((await bare.ask<{ runsPerSecond: number }>(`run ${runs}`)).runsPerSecond);
      worker.push(await fleet.batch(runs, 'echo', () => ({ steps: 2 })));
    }
    const baseline = summarize(`bare graph.invoke loop + PostgresSaver, c=${CONCURRENCY}`, 'runs/s', loop, `${runs} runs per repeat, one process`);
    const note = `${runs} jobs per repeat, timed from admission to the last completion; ${q.backend} queue`;
    return [baseline, holdAgainst(summarize(`Runledger end to end, 1 worker process, c=${CONCURRENCY}`, 'runs/s', worker, note), baseline, TARGET)];
  } finally {
    await bare.close();
    await fleet.stop();
    await db.drop();
  }
}
