// End to end in the shape a user runs Runledger (issue 19): 300 `echo {steps:2}` jobs submitted
// over HTTP (POST /v1/jobs, 16 requests in flight on kept-alive connections, lib/http-post.ts)
// to a producer process, run by 2 worker processes with WORKER_CONCURRENCY=8, timed from the
// first submit until the ledger shows every job completed (polled every 50 ms). Held against the bare loop (bench/procs/bare-invoke.ts): the
// same graph on LangGraph's stock PostgresSaver, durability 'sync', 300 threads at concurrency 16
// in one process. Producer and workers run with their defaults (rate limit unset, auth off;
// the producer at LOG_LEVEL=warn, the workers at info, as the other modules run them). Target ≥ 0.8×.
// Beside each throughput, the CPU time per job of every process (lib/cpu-split.ts): producer,
// each worker, the PostgreSQL backends serving each of them, Redis, the bench's own polls.
// Then a shape check, reported and not judged: the same runs with one worker process of c=16
// instead of two of c=8, each against bare loop runs made beside it.
import { freePort, isPortOpen } from '../packages/ledger/src/index';
import { benchSchema } from './bench-schema';
import { type BenchOptions, type Figure, holdAgainst, size, summarize } from './figures';
import { redisPid } from './lib/cpu';
import { CpuSplit } from './lib/cpu-split';
import { jsonPoster } from './lib/http-post';
import { benchQueueConfig, type Proc, spawnScript, startHelper, startWorker, stop } from './lib/processes';
import { emptyQueue } from './lib/queues';

const IN_FLIGHT = 16;
const WORKERS = 2;
const WORKER_CONCURRENCY = 8;
const TARGET = 0.8;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function run(opts: BenchOptions): Promise<Figure[]> {
  const jobs = size(opts, { smoke: 48, quick: 300, full: 300 });
  // Five in the quick form too: on this 2-core machine identical repeats spread by up to a third.
  const repeats = size(opts, { smoke: 1, quick: 5, full: 5 });
  // The bench's own pool (its polls) is named too; pg reads PGAPPNAME when it opens a connection.
  const appName = process.env.PGAPPNAME;
  process.env.PGAPPNAME = 'bench';
  const db = await benchSchema(opts, 'e2ehttp');
  const q = benchQueueConfig(opts.redisUrl ? 'redis' : 'postgres', opts.databaseUrl, db.schema, opts.redisUrl);
  const port = await freePort();
  const { RATE_LIMIT_PER_SECOND: _unset, ...inherited } = process.env;
  const procs: Proc[] = [];
  const bare = startHelper('bare-invoke.ts', { DATABASE_URL: opts.databaseUrl, DB_SCHEMA: db.schema, CONCURRENCY: String(IN_FLIGHT), PGAPPNAME: 'bare-loop' });
  let split: CpuSplit | undefined;
  const client = jsonPoster(`http://127.0.0.1:${port}`, IN_FLIGHT);
  try {
    const producer = spawnScript('apps/producer/src/main.ts', {
      ...inherited,
      PORT: String(port),
      DATABASE_URL: opts.databaseUrl,
      DB_SCHEMA: db.schema,
      QUEUE_BACKEND: q.backend,
      REDIS_URL: q.redisUrl ?? '',
      QUEUE_PREFIX: q.prefix ?? 'runledger',
      LOG_LEVEL: 'warn',
      PGAPPNAME: 'producer',
    });
    procs.push(producer);
    for (let end = Date.now() + 180_000; !(await isPortOpen(port)); ) {
      if (producer.child.exitCode !== null || Date.now() > end) throw new Error(`the producer did not start:\n${producer.output().slice(-2000)}`);
      await sleep(100);
    }
    for (let i = 0; i < WORKERS; i++) {
      procs.push(
        await startWorker(q, opts.databaseUrl, db.schema, `e2e-http-${i}`, { WORKER_CONCURRENCY: String(WORKER_CONCURRENCY), PGAPPNAME: `worker-${i}` }),
      );
    }

    /** Submits `count` jobs over HTTP, IN_FLIGHT at a time; resolves with runs/s once all read completed in the ledger. */
    const endToEnd = async (count: number): Promise<number> => {
      const completedBefore = (await db.ledger.countByStatus()).completed ?? 0;
      const t0 = performance.now();
      let next = 0;
      const lane = async () => {
        while (next < count) {
          next++;
          const r = await client.post('/v1/jobs', JSON.stringify({ graph: 'echo', input: { steps: 2 } }));
          if (r.status !== 202) throw new Error(`POST /v1/jobs answered ${r.status}: ${r.body}`);
        }
      };
      await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
      // A count, not the jobs themselves: the poll is the bench's cost, not Runledger's.
      for (;;) {
        const byStatus = await db.ledger.countByStatus();
        const done = (byStatus.completed ?? 0) - completedBefore;
        if ((byStatus.failed ?? 0) > 0) throw new Error(`jobs failed: ${JSON.stringify(byStatus)}`);
        if (done >= count) return count / ((performance.now() - t0) / 1000);
        if (performance.now() - t0 > 300_000) throw new Error(`only ${done} of ${count} jobs completed after 300 s`);
        await sleep(50);
      }
    };
    // Warm-up, not counted.
    await endToEnd(IN_FLIGHT * 2);
    await bare.ask(`run ${IN_FLIGHT * 2}`);
    const ours: number[] = [];
    const loop: number[] = [];
    const processes: Record<string, number> = { 'bare loop process': bare.child.pid ?? 0, 'producer process': procs[0]?.child.pid ?? 0 };
    for (let i = 0; i < WORKERS; i++) processes[`worker-${i} process`] = procs[i + 1]?.child.pid ?? 0;
    const apps = ['bare-loop', 'producer', ...Array.from({ length: WORKERS }, (_, i) => `worker-${i}`), 'bench'];
    split = await CpuSplit.open(opts.databaseUrl, processes, apps, opts.redisUrl ? await redisPid(opts.redisUrl) : undefined);
    const loopCpu = new Map<string, number[]>();
    const ourCpu = new Map<string, number[]>();
    const record = (into: Map<string, number[]>, ms: Record<string, number>, machineMs: number, keep: (k: string) => boolean) => {
      const kept = Object.entries(ms).filter(([k, v]) => keep(k) && v > 0);
      // The total leaves out what other users share: background processes, and backends that
      // ended (the postmaster's reaped-children time counts every user's short connections).
      const own = kept.filter(([k]) => !/background|ended/.test(k));
      for (const [k, v] of [
        ...kept,
        ['total, own processes and backends', own.reduce((a, [, v]) => a + v, 0)] as const,
        ['whole machine (all users)', machineMs] as const,
      ])
        into.set(k, [...(into.get(k) ?? []), v / jobs]);
    };
    /** `repeats` times: the bare loop, then Runledger, each with the CPU split of its window. */
    const alternate = async (cpu: CpuSplit, loopRuns: number[], ourRuns: number[], loopMs: Map<string, number[]>, ourMs: Map<string, number[]>) => {
      for (let r = 0; r < repeats; r++) {
        const l = await cpu.during(() => bare.ask<{ runsPerSecond: number }>(`run ${jobs}`));
        loopRuns.push(l.result.runsPerSecond);
        record(loopMs, l.ms, l.machineMs, (k) => !/producer|worker|Redis|bench/.test(k));
        const self = process.cpuUsage();
        const o = await cpu.during(() => endToEnd(jobs));
        const mine = process.cpuUsage(self);
        ourRuns.push(o.result);
        record(ourMs, { ...o.ms, 'bench process (submits, polls)': (mine.user + mine.system) / 1000 }, o.machineMs, (k) => !/bare/.test(k));
      }
    };
    await alternate(split, loop, ours, loopCpu, ourCpu);
    const baseline = summarize(`bare graph.invoke + stock PostgresSaver, ${jobs} threads at c=${IN_FLIGHT}`, 'runs/s', loop, "one process, durability 'sync'");
    const note = `${jobs} jobs per repeat over HTTP, ${IN_FLIGHT} submits in flight, ${q.backend} queue, first submit to last completed`;
    const figures = [
      baseline,
      holdAgainst(summarize(`Runledger over HTTP: producer + ${WORKERS} workers × c=${WORKER_CONCURRENCY}`, 'runs/s', ours, note), baseline, TARGET),
    ];
    for (const [k, v] of loopCpu) figures.push(summarize(`bare loop CPU per run: ${k}`, 'ms', v));
    const loopTotal = figures.find((f) => f.name === 'bare loop CPU per run: total, own processes and backends')!;
    for (const [k, v] of ourCpu) {
      const f = summarize(`Runledger CPU per job: ${k}`, 'ms', v);
      figures.push(k === 'total, own processes and backends' ? holdAgainst(f, loopTotal) : f);
    }
    await split.close();
    split = undefined;
    // The shape check: the same runs with the work of both workers in one process of c=16 (the
    // bare loop's concurrency), reported beside the judged shape, each against its own loop runs.
    await Promise.all(procs.splice(1).map((p) => stop(p)));
    const solo = await startWorker(q, opts.databaseUrl, db.schema, 'e2e-http-solo', { WORKER_CONCURRENCY: String(IN_FLIGHT), PGAPPNAME: 'worker-solo' });
    procs.push(solo);
    await endToEnd(IN_FLIGHT * 2);
    const soloProcs = {
      'bare loop process': processes['bare loop process'] ?? 0,
      'producer process': procs[0]?.child.pid ?? 0,
      'worker process': solo.child.pid ?? 0,
    };
    split = await CpuSplit.open(
      opts.databaseUrl,
      soloProcs,
      ['bare-loop', 'producer', 'worker-solo', 'bench'],
      opts.redisUrl ? await redisPid(opts.redisUrl) : undefined,
    );
    const soloLoop: number[] = [];
    const soloOurs: number[] = [];
    const soloLoopCpu = new Map<string, number[]>();
    const soloCpu = new Map<string, number[]>();
    await alternate(split, soloLoop, soloOurs, soloLoopCpu, soloCpu);
    const soloBaseline = summarize('shape check: bare loop, run beside the one-worker runs', 'runs/s', soloLoop);
    const soloLoopTotal = summarize('shape check: bare loop CPU per run', 'ms', soloLoopCpu.get('total, own processes and backends') ?? []);
    figures.push(
      soloBaseline,
      holdAgainst(summarize(`shape check: Runledger over HTTP, producer + 1 worker × c=${IN_FLIGHT}`, 'runs/s', soloOurs, note), soloBaseline),
      soloLoopTotal,
      holdAgainst(summarize('shape check: Runledger CPU per job, total', 'ms', soloCpu.get('total, own processes and backends') ?? []), soloLoopTotal),
      summarize('shape check: Runledger CPU per job, worker process', 'ms', soloCpu.get('worker process') ?? []),
      summarize('shape check: Runledger CPU per job, its PostgreSQL backends', 'ms', soloCpu.get('PostgreSQL for worker-solo') ?? []),
    );
    return figures;
  } finally {
    client.close();
    await split?.close();
    await bare.close();
    await Promise.all(procs.map((p) => stop(p)));
    await emptyQueue(q);
    await db.drop();
    if (appName === undefined) delete process.env.PGAPPNAME;
    else process.env.PGAPPNAME = appName;
  }
}
