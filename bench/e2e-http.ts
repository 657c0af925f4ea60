// End to end in the shape a user runs Runledger (issue 19): 300 `echo {steps:2}` jobs submitted
// over HTTP (POST /v1/jobs, 16 requests in flight) to a producer process, run by 2 worker
// processes with WORKER_CONCURRENCY=8, timed from the first submit until the ledger shows every
// job completed (polled every 50 ms). Held against the bare loop (bench/procs/bare-invoke.ts): the
// same graph on LangGraph's stock PostgresSaver, durability 'sync', 300 threads at concurrency 16
// in one process. Producer and workers run with their defaults (rate limit unset, auth off;
// the producer at LOG_LEVEL=warn, the workers at info, as the other modules run them). Reported only: the target (≥ 0.8×) is the issue's, no work went into it yet.
import { freePort, isPortOpen } from '../packages/ledger/src/index';
import { benchSchema } from './bench-schema';
import { type BenchOptions, type Figure, holdAgainst, size, summarize } from './figures';
import { benchQueueConfig, type Proc, spawnScript, startHelper, startWorker, stop } from './lib/processes';
import { emptyQueue } from './lib/queues';

const IN_FLIGHT = 16;
const WORKERS = 2;
const WORKER_CONCURRENCY = 8;
const TARGET = 0.8;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function run(opts: BenchOptions): Promise<Figure[]> {
  const jobs = size(opts, { smoke: 48, quick: 300, full: 300 });
  const repeats = size(opts, { smoke: 1, quick: 3, full: 5 });
  const db = await benchSchema(opts, 'e2ehttp');
  const q = benchQueueConfig(opts.redisUrl ? 'redis' : 'postgres', opts.databaseUrl, db.schema, opts.redisUrl);
  const port = await freePort();
  const { RATE_LIMIT_PER_SECOND: _unset, ...inherited } = process.env;
  const procs: Proc[] = [];
  const bare = startHelper('bare-invoke.ts', { DATABASE_URL: opts.databaseUrl, DB_SCHEMA: db.schema, CONCURRENCY: String(IN_FLIGHT) });
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
    });
    procs.push(producer);
    for (let end = Date.now() + 60_000; !(await isPortOpen(port)); ) {
      if (producer.child.exitCode !== null || Date.now() > end) throw new Error(`the producer did not start:\n${producer.output().slice(-2000)}`);
      await sleep(100);
    }
    for (let i = 0; i < WORKERS; i++) {
      procs.push(await startWorker(q, opts.databaseUrl, db.schema, `e2e-http-${i}`, { WORKER_CONCURRENCY: String(WORKER_CONCURRENCY) }));
    }

    /** Submits `count` jobs over HTTP, IN_FLIGHT at a time; resolves with runs/s once all read completed in the ledger. */
    const endToEnd = async (count: number): Promise<number> => {
      const t0 = performance.now();
      const ids = new Set<string>();
      let next = 0;
      const lane = async () => {
        while (next < count) {
          next++;
          const r = await fetch(`http://127.0.0.1:${port}/v1/jobs`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ graph: 'echo', input: { steps: 2 } }),
          });
          if (r.status !== 202) throw new Error(`POST /v1/jobs answered ${r.status}: ${await r.text()}`);
          ids.add(((await r.json()) as { jobId: string }).jobId);
        }
      };
      await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
      // Newest first: this round's jobs are the newest, so one page of 500 holds all of them once done.
      for (;;) {
        const done = (await db.ledger.list({ status: 'completed', limit: 500 })).jobs.filter((j) => ids.has(j.jobId)).length;
        if (done === count) return count / ((performance.now() - t0) / 1000);
        if (performance.now() - t0 > 300_000) throw new Error(`only ${done} of ${count} jobs completed after 300 s`);
        await sleep(50);
      }
    };
    // Warm-up, not counted.
    await endToEnd(IN_FLIGHT * 2);
    await bare.ask(`run ${IN_FLIGHT * 2}`);
    const ours: number[] = [];
    const loop: number[] = [];
    for (let r = 0; r < repeats; r++) {
      loop.push((await bare.ask<{ runsPerSecond: number }>(`run ${jobs}`)).runsPerSecond);
      ours.push(await endToEnd(jobs));
    }
    const baseline = summarize(`bare graph.invoke + stock PostgresSaver, ${jobs} threads at c=${IN_FLIGHT}`, 'runs/s', loop, "one process, durability 'sync'");
    const note = `${jobs} jobs per repeat over HTTP, ${IN_FLIGHT} submits in flight, ${q.backend} queue, first submit to last completed`;
    return [
      baseline,
      holdAgainst(summarize(`Runledger over HTTP: producer + ${WORKERS} workers × c=${WORKER_CONCURRENCY}`, 'runs/s', ours, note), baseline, TARGET),
    ];
  } finally {
    await bare.close();
    await Promise.all(procs.map((p) => stop(p)));
    await emptyQueue(q);
    await db.drop();
  }
}
