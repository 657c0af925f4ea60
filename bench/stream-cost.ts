// What a stream subscriber costs per job, beside the same graph run bare. One job at a time, the
// echo graph (2 steps), three ways in each repeat, side by side:
//   - wait:   POST /runs/wait through the LangGraph API (producer in this process, one worker
//             process at concurrency 1); nobody streams, so nothing is written to the stream log;
//   - stream: POST /runs/stream (stream_mode values + updates) read to the end by fetch: the worker
//             appends every chunk to the PostgreSQL log, the producer tails it to the client;
//   - bare:   graph.invoke on LangGraph's own PostgresSaver in a helper process (procs/bare-invoke.ts,
//             concurrency 1): no ledger, queue, lease or HTTP.
// Wall time per job, and CPU time per job of every process taking part with its PostgreSQL
// backends (lib/cpu-split.ts; the bench process holds the producer and the HTTP client).
import type { AddressInfo } from 'node:net';
import { buildApp } from '../apps/producer/src/app';
import { openQueue } from '../packages/queue/src/index';
import { loadGraphs } from '../packages/runtime/src/index';
import { benchSchema } from './bench-schema';
import { type BenchOptions, type Figure, holdAgainst, size, summarize } from './figures';
import { redisPid } from './lib/cpu';
import { CpuSplit } from './lib/cpu-split';
import { benchQueueConfig, startHelper, startWorker, stop } from './lib/processes';

const INPUT = { steps: 2 };
type Leg = 'wait' | 'stream' | 'bare';
const LABEL: Record<Leg, string> = {
  wait: 'POST /runs/wait (no subscriber)',
  stream: 'POST /runs/stream read to the end (one subscriber)',
  bare: 'bare graph.invoke + PostgresSaver',
};

async function post(url: string, body: unknown): Promise<Response> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!r.ok || !r.body) throw new Error(`${url} answered ${r.status}: ${await r.text()}`);
  return r;
}

/** `count` echo runs one after another through /runs/wait or /runs/stream. */
async function viaApi(url: string, leg: 'wait' | 'stream', count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    if (leg === 'wait') {
      const values = (await (await post(`${url}/runs/wait`, { assistant_id: 'echo', input: INPUT })).json()) as { done?: number };
      if (values.done !== INPUT.steps) throw new Error(`runs/wait answered ${JSON.stringify(values)}`);
    } else {
      const text = await (await post(`${url}/runs/stream`, { assistant_id: 'echo', input: INPUT, stream_mode: ['values', 'updates'] })).text();
      if (!/event: values\r?\ndata: \{[^\n]*"done":2/.test(text)) throw new Error(`runs/stream ended without the final values:\n${text.slice(-500)}`);
    }
  }
}

export async function run(opts: BenchOptions): Promise<Figure[]> {
  const jobs = size(opts, { smoke: 3, quick: 40, full: 150 });
  const repeats = size(opts, { smoke: 1, quick: 3, full: 5 });
  process.env.PGAPPNAME = 'bench';
  const db = await benchSchema(opts, 'stream_cost');
  const q = benchQueueConfig(opts.redisUrl ? 'redis' : 'postgres', opts.databaseUrl, db.schema, opts.redisUrl);
  const queue = openQueue(q);
  const app = buildApp({ ledger: db.ledger, queue, graphs: await loadGraphs(), schema: db.schema });
  const bare = startHelper('bare-invoke.ts', { DATABASE_URL: opts.databaseUrl, DB_SCHEMA: db.schema, CONCURRENCY: '1', PGAPPNAME: 'bare-loop' });
  const worker = await startWorker(q, opts.databaseUrl, db.schema, 'bench-stream-cost', { WORKER_CONCURRENCY: '1', PGAPPNAME: 'worker' });
  let split: CpuSplit | undefined;
  try {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    await viaApi(url, 'wait', 3); // warm-up, not counted
    await viaApi(url, 'stream', 3);
    await bare.ask('run 3');
    split = await CpuSplit.open(
      opts.databaseUrl,
      { 'worker process': worker.child.pid ?? 0, 'bare loop process': bare.child.pid ?? 0 },
      ['bench', 'worker', 'bare-loop'],
      opts.redisUrl ? await redisPid(opts.redisUrl) : undefined,
    );
    const wall: Record<Leg, number[]> = { wait: [], stream: [], bare: [] };
    const cpu: Record<Leg, number[]> = { wait: [], stream: [], bare: [] };
    for (let r = 0; r < repeats; r++) {
      for (const leg of ['bare', 'wait', 'stream'] as const) {
        const self = process.cpuUsage();
        const t0 = performance.now();
        const { ms } = await split.during(() => (leg === 'bare' ? bare.ask(`run ${jobs}`) : viaApi(url, leg, jobs)));
        wall[leg].push((performance.now() - t0) / jobs);
        const mine = process.cpuUsage(self);
        // The leg's own processes and backends; what every user shares (background, ended backends) is left out.
        const counted = (k: string) => (leg === 'bare' ? /bare/.test(k) : !/bare|background|ended/.test(k));
        const mineMs = leg === 'bare' ? 0 : (mine.user + mine.system) / 1000;
        const total = Object.entries(ms).reduce((a, [k, v]) => (counted(k) ? a + v : a), mineMs);
        cpu[leg].push(total / jobs);
      }
    }
    const note = `${jobs} echo jobs (2 steps) one at a time, ${repeats} repeats, ${q.backend} queue`;
    const bareWall = summarize(`wall per job: ${LABEL.bare}`, 'ms', wall.bare, note);
    const waitWall = holdAgainst(summarize(`wall per job: ${LABEL.wait}`, 'ms', wall.wait), bareWall);
    const bareCpu = summarize(`CPU per job: ${LABEL.bare}`, 'ms', cpu.bare, 'its process and its PostgreSQL backends');
    const waitCpu = holdAgainst(summarize(`CPU per job: ${LABEL.wait}`, 'ms', cpu.wait, 'producer + client, worker, their backends, Redis'), bareCpu);
    return [
      bareWall,
      waitWall,
      holdAgainst(summarize(`wall per job: ${LABEL.stream}`, 'ms', wall.stream), waitWall),
      bareCpu,
      waitCpu,
      holdAgainst(summarize(`CPU per job: ${LABEL.stream}`, 'ms', cpu.stream), waitCpu),
    ];
  } finally {
    await split?.close();
    await bare.close();
    await stop(worker);
    await app.close();
    await queue.close();
    await db.drop();
  }
}
