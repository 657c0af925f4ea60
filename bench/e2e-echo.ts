// End-to-end runs per second of `echo` (2 steps) through one worker process at concurrency 16
// (admission, delivery, claim, fenced checkpoints, completion), held against the bare loop:
// the same graph with LangGraph's unfenced PostgresSaver, invoked 16 at a time in one process
// (bench/procs/bare-invoke.ts). Both are real processes with the same pool size; repeats
// alternate between them. Target: ≥ 0.8× the bare loop. Beside each throughput, the CPU time
// per job of every process involved (from /proc): where a job's time goes on 2 cores.
import { benchSchema } from './bench-schema';
import { type BenchOptions, type Figure, holdAgainst, size, summarize } from './figures';
import { cpuDuring, postgresPids, redisPid } from './lib/cpu';
import { Fleet } from './lib/fleet';
import { benchQueueConfig, startHelper } from './lib/processes';

const CONCURRENCY = 16;
const TARGET = 0.8;

type Cpu = Map<string, number[]>;

function record(cpu: Cpu, ms: Record<string, number>, runs: number): void {
  const total = Object.values(ms).reduce((a, b) => a + b, 0);
  for (const [k, v] of Object.entries({ ...ms, total })) cpu.set(k, [...(cpu.get(k) ?? []), v / runs]);
}

export async function run(opts: BenchOptions): Promise<Figure[]> {
  const runs = size(opts, { smoke: 48, quick: 400, full: 2_000 });
  const repeats = size(opts, { smoke: 2, quick: 3, full: 5 });
  const db = await benchSchema(opts, 'e2e');
  const q = benchQueueConfig(opts.redisUrl ? 'redis' : 'postgres', opts.databaseUrl, db.schema, opts.redisUrl);
  const fleet = await Fleet.start(db, q, opts.databaseUrl, 1, CONCURRENCY);
  const bare = startHelper('bare-invoke.ts', { DATABASE_URL: opts.databaseUrl, DB_SCHEMA: db.schema, CONCURRENCY: String(CONCURRENCY) });
  try {
    const redis = opts.redisUrl ? [await redisPid(opts.redisUrl)] : [];
    // Warm-up, not counted: JIT, pools, connections on both sides.
    await fleet.batch(CONCURRENCY * 4, 'echo', () => ({ steps: 2 }));
    await bare.ask(`run ${CONCURRENCY * 4}`);
    const worker: number[] = [];
    const loop: number[] = [];
    const workerCpu: Cpu = new Map();
    const loopCpu: Cpu = new Map();
    for (let r = 0; r < repeats; r++) {
      const l = await cpuDuring({ 'loop process': [bare.child.pid!], PostgreSQL: await postgresPids(opts.databaseUrl) }, () =>
        bare.ask<{ runsPerSecond: number }>(`run ${runs}`),
      );
      loop.push(l.result.runsPerSecond);
      record(loopCpu, l.ms, runs);
      const pgPids = await postgresPids(opts.databaseUrl);
      const w = await cpuDuring({ 'worker process': [fleet.procs[0]!.child.pid!], PostgreSQL: pgPids, Redis: redis }, () =>
        fleet.batch(runs, 'echo', () => ({ steps: 2 })),
      );
      worker.push(w.result);
      record(workerCpu, w.ms, runs);
    }
    const baseline = summarize(`bare graph.invoke loop + PostgresSaver, c=${CONCURRENCY}`, 'runs/s', loop, `${runs} runs per repeat, one process`);
    const note = `${runs} jobs per repeat, timed from admission to the last completion; ${q.backend} queue`;
    const figures = [baseline, holdAgainst(summarize(`Runledger end to end, 1 worker process, c=${CONCURRENCY}`, 'runs/s', worker, note), baseline, TARGET)];
    const cpuNote: Record<string, string> = { bench: 'admission, delivery and progress polls', PostgreSQL: 'whole server' };
    for (const [k, v] of loopCpu) if (k !== 'bench') figures.push(summarize(`bare loop CPU per run: ${k}`, 'ms', v, cpuNote[k]));
    const loopTotal = summarize('bare loop CPU per run: total', 'ms', [...(loopCpu.get('total') ?? [])]);
    for (const [k, v] of workerCpu) {
      const f = summarize(`Runledger CPU per job: ${k}`, 'ms', v, cpuNote[k]);
      figures.push(k === 'total' ? holdAgainst(f, loopTotal) : f);
    }
    return figures;
  } finally {
    await bare.close();
    await fleet.stop();
    await db.drop();
  }
}
