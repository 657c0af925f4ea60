// Bulk admission: jobs/s of POST /v1/jobs/batch with batches of 100, held against BullMQ
// `addBulk` of 100 on Redis (no database, no HTTP), side by side in one run. The producer runs as
// `npm run producer` runs it (apps/producer/src/main.ts, default settings: rate limit unset, auth
// off, LOG_LEVEL=warn); each batch is one coalesced ledger statement, one addBulk and one
// `enqueued` events statement. The load generator (fetch, in this process) and the baseline's
// addBulk loops keep CONCURRENCY batches in flight each; repeats alternate between the two.
// Every job of every batch must answer 202. Target from issue 19: ≥ 0.5× addBulk.
import { randomUUID } from 'node:crypto';
import { freePort, isPortOpen } from '../packages/ledger/src/index';
import { benchSchema } from './bench-schema';
import { type BenchOptions, type Figure, holdAgainst, size, summarize, throughput } from './figures';
import { benchQueueConfig, spawnScript, stop } from './lib/processes';
import { closeQueue, emptyRedisQueue, readyQueue } from './lib/queues';

const BATCH = 100;
const CONCURRENCY = 4;
const TARGET = 0.5;

export async function run(opts: BenchOptions): Promise<Figure[]> {
  if (!opts.redisUrl) throw new Error('bulk-admission needs Redis');
  const seconds = size(opts, { smoke: 1, quick: 4, full: 10 });
  const repeats = size(opts, { smoke: 1, quick: 3, full: 5 });
  const db = await benchSchema(opts, 'bulk');
  const producerQueue = benchQueueConfig('redis', opts.databaseUrl, db.schema, opts.redisUrl);
  const bareQueue = benchQueueConfig('redis', opts.databaseUrl, db.schema, opts.redisUrl);
  const port = await freePort();
  // The defaults as a newcomer gets them: no RATE_LIMIT_PER_SECOND.
  const { RATE_LIMIT_PER_SECOND: _unset, ...env } = process.env;
  const proc = spawnScript('apps/producer/src/main.ts', {
    ...env,
    PORT: String(port),
    DATABASE_URL: opts.databaseUrl,
    DB_SCHEMA: db.schema,
    QUEUE_BACKEND: 'redis',
    REDIS_URL: opts.redisUrl,
    QUEUE_PREFIX: producerQueue.prefix ?? '',
    LOG_LEVEL: 'warn',
  });
  const queue = await readyQueue(bareQueue);
  try {
    for (let end = Date.now() + 60_000; !(await isPortOpen(port)); ) {
      if (proc.child.exitCode !== null || Date.now() > end) throw new Error(`the producer did not start:\n${proc.output().slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const body = JSON.stringify({ jobs: Array.from({ length: BATCH }, () => ({ graph: 'echo', input: { steps: 2 } })) });
    const viaHttp = async () => {
      const r = await fetch(`http://127.0.0.1:${port}/v1/jobs/batch`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      const answer = (await r.json()) as { results?: Array<{ status: number }> };
      const admitted = answer.results?.filter((x) => x.status === 202).length ?? 0;
      if (r.status !== 200 || admitted !== BATCH) throw new Error(`POST /v1/jobs/batch answered ${r.status}, ${admitted} of ${BATCH} jobs admitted`);
    };
    const addBulk = () =>
      queue.addBulk(
        Array.from({ length: BATCH }, () => {
          const jobId = randomUUID();
          return { name: 'run', data: { jobId }, opts: { jobId } };
        }),
      );
    const http: number[] = [];
    const bare: number[] = [];
    // Warm-up: JIT, pools, connections.
    await throughput(CONCURRENCY, 1_000, viaHttp);
    await throughput(CONCURRENCY, 1_000, addBulk);
    for (let r = 0; r < repeats; r++) {
      http.push((await throughput(CONCURRENCY, seconds * 1000, viaHttp)) * BATCH);
      bare.push((await throughput(CONCURRENCY, seconds * 1000, addBulk)) * BATCH);
    }
    const note = `batches of ${BATCH}, ${CONCURRENCY} in flight, ${seconds} s per repeat`;
    const baseline = summarize(`BullMQ addBulk of ${BATCH} on Redis: jobs/s`, 'jobs/s', bare, note);
    return [baseline, holdAgainst(summarize(`POST /v1/jobs/batch of ${BATCH}: jobs/s`, 'jobs/s', http, note), baseline, TARGET)];
  } finally {
    await stop(proc);
    await closeQueue(queue);
    for (const q of [producerQueue, bareQueue]) await emptyRedisQueue(opts.redisUrl, q.prefix ?? '');
    await db.drop();
  }
}
