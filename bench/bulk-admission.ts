// Bulk admission: jobs/s of POST /v1/jobs/batch with batches of 100, held against BullMQ
// `addBulk` of 100 on Redis (no database, no HTTP), side by side in one run. The producer runs as
// `npm run producer` runs it (apps/producer/src/main.ts, default settings: rate limit unset, auth
// off, LOG_LEVEL=warn), but for the backlog bound (MAX_BACKLOG=0: nothing drains this queue).
// Each batch is one coalesced ledger statement, one addBulk and one `enqueued` events statement.
// The load generator (lib/http-post.ts, in this process) and the baseline's addBulk loops keep
// CONCURRENCY batches in flight each; repeats alternate between the two. Every job of every
// batch must answer 202. Target from issue 19: ≥ 0.5× addBulk. Beside each, CPU per job from
// /proc (lib/cpu-split.ts): the producer process, its PostgreSQL backends, the Redis server and
// the bench process (the load generator, or the addBulk loops themselves). Reported beside, not
// judged: the durable peers' own bulk calls (lib/bulk-peers.ts) in the same repeats, and the same
// batches posted through the same client to a bare Fastify endpoint (bench/procs/bare-admission.ts)
// that only calls `addBulk`, or one multi-row INSERT then `addBulk`: what HTTP alone costs.
import { randomUUID } from 'node:crypto';
import { freePort, isPortOpen } from '../packages/ledger/src/index';
import { benchSchema } from './bench-schema';
import { type BenchOptions, type Figure, holdAgainst, size, summarize, throughput } from './figures';
import { type BulkPeers, openBulkPeers, PEERS_APP } from './lib/bulk-peers';
import { redisPid } from './lib/cpu';
import { CpuSplit } from './lib/cpu-split';
import { jsonPoster } from './lib/http-post';
import { benchQueueConfig, type Proc, spawnScript, stop, waitForOutput } from './lib/processes';
import { closeQueue, emptyRedisQueue, readyQueue } from './lib/queues';

const BATCH = 100;
const CONCURRENCY = 4;
const TARGET = 0.5;
/** The bare endpoints (PEER of bench/procs/bare-admission.ts) and how they are reported. */
const BARE = { queue: 'bare Fastify endpoint, addBulk only', 'insert-add': 'bare Fastify endpoint, INSERT then addBulk' } as const;
const BARE_APP = 'bulk-bare';
const OURS = 'POST /v1/jobs/batch';

/** The side a CPU figure belongs to when it is one server's own (its process or its backends); undefined for shared ones. */
function servedBy(key: string): string | undefined {
  if (key === 'producer process' || key.endsWith('bulk-producer')) return OURS;
  const endpoint = key.match(/^(.+) endpoint process$/)?.[1];
  if (endpoint) return BARE[endpoint as keyof typeof BARE];
  if (key.endsWith(BARE_APP)) return BARE['insert-add'];
  return undefined;
}

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
    PGAPPNAME: 'bulk-producer',
    // No worker drains this queue: at 7,000 jobs/s the default backlog bound (100,000 waiting
    // deliveries) is reached within the run and admissions rightly answer 503 backlog_full.
    MAX_BACKLOG: '0',
  });
  const queue = await readyQueue(bareQueue);
  const client = jsonPoster(`http://127.0.0.1:${port}`, CONCURRENCY);
  let peers: BulkPeers | undefined;
  const bare: Array<{ label: string; key: string; proc: Proc; client: ReturnType<typeof jsonPoster> }> = [];
  try {
    for (const [peer, label] of Object.entries(BARE)) {
      const barePort = await freePort();
      const bareEnv = { ...env, PEER: peer, PORT: String(barePort), REDIS_URL: opts.redisUrl, QUEUE_PREFIX: bareQueue.prefix ?? '' };
      const barePg = { DATABASE_URL: opts.databaseUrl, DB_SCHEMA: db.schema, PGAPPNAME: BARE_APP };
      const p = spawnScript('bench/procs/bare-admission.ts', { ...bareEnv, ...barePg });
      bare.push({ label, key: `${peer} endpoint process`, proc: p, client: jsonPoster(`http://127.0.0.1:${barePort}`, CONCURRENCY) });
      await waitForOutput(p, /listening/, label, 180_000);
    }
    for (let end = Date.now() + 180_000; !(await isPortOpen(port)); ) {
      if (proc.child.exitCode !== null || Date.now() > end) throw new Error(`the producer did not start:\n${proc.output().slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const body = JSON.stringify({ jobs: Array.from({ length: BATCH }, () => ({ graph: 'echo', input: { steps: 2 } })) });
    const viaHttp = async (post = client.post) => {
      const r = await post('/v1/jobs/batch', body);
      const answer = JSON.parse(r.body) as { results?: Array<{ status: number }> };
      const admitted = answer.results?.filter((x) => x.status === 202).length ?? 0;
      if (r.status !== 200 || admitted !== BATCH)
        throw new Error(`POST /v1/jobs/batch answered ${r.status}, ${admitted} of ${BATCH} jobs admitted: ${r.body.slice(0, 300)}`);
    };
    const addBulk = () =>
      queue.addBulk(
        Array.from({ length: BATCH }, () => {
          const jobId = randomUUID();
          return { name: 'run', data: { jobId }, opts: { jobId } };
        }),
      );
    const http: number[] = [];
    const plain: number[] = [];
    const bareRuns = new Map<string, number[]>(bare.map((b) => [b.label, []]));
    peers = await openBulkPeers(opts.databaseUrl, db.schema, queue, BATCH);
    const peerRuns = new Map<string, number[]>(Object.keys(peers.ops).map((name) => [name, []]));
    // Warm-up: JIT, pools, connections.
    await throughput(CONCURRENCY, 1_000, () => viaHttp());
    await throughput(CONCURRENCY, 1_000, addBulk);
    for (const b of bare) await throughput(CONCURRENCY, 500, () => viaHttp(b.client.post));
    for (const op of Object.values(peers.ops)) await throughput(CONCURRENCY, 500, op);
    const split = await CpuSplit.open(
      opts.databaseUrl,
      { 'producer process': proc.child.pid ?? 0, ...Object.fromEntries(bare.map((b) => [b.key, b.proc.child.pid ?? 0])) },
      ['bulk-producer', PEERS_APP, BARE_APP],
      await redisPid(opts.redisUrl),
    );
    const cpu = new Map<string, number[]>();
    /** Jobs/s of `op` (batches of BATCH), recording CPU per job under `side`. */
    const measure = async (side: string, op: () => Promise<unknown>) => {
      const self = process.cpuUsage();
      let batches = 0; // every batch in the CPU window, warm-up included
      const { result, ms } = await split.during(() => throughput(CONCURRENCY, seconds * 1000, () => op().then(() => batches++)));
      const mine = process.cpuUsage(self);
      const jobs = batches * BATCH;
      const parts = { ...ms, 'bench process': (mine.user + mine.system) / 1000 };
      // A server process and its PostgreSQL backends count only on their own side.
      const own = (k: string) => (servedBy(k) ?? side) === side;
      const kept = Object.entries(parts).filter(([k, v]) => v > 0 && own(k) && !/background|ended/.test(k));
      for (const [k, v] of [...kept, ['total of the above', kept.reduce((a, [, v]) => a + v, 0)] as const])
        cpu.set(`${side}: ${k}`, [...(cpu.get(`${side}: ${k}`) ?? []), (v * 1000) / jobs]);
      return result * BATCH;
    };
    try {
      for (let r = 0; r < repeats; r++) {
        http.push(await measure(OURS, () => viaHttp()));
        plain.push(await measure('addBulk', addBulk));
        for (const b of bare) bareRuns.get(b.label)?.push(await measure(b.label, () => viaHttp(b.client.post)));
        for (const [name, op] of Object.entries(peers.ops)) peerRuns.get(name)?.push(await measure(name, op));
      }
    } finally {
      await split.close();
    }
    const note = `batches of ${BATCH}, ${CONCURRENCY} in flight, ${seconds} s per repeat`;
    const baseline = summarize(`BullMQ addBulk of ${BATCH} on Redis: jobs/s`, 'jobs/s', plain, note);
    const ours = summarize(`POST /v1/jobs/batch of ${BATCH}: jobs/s`, 'jobs/s', http, note);
    const figures = [baseline, holdAgainst(ours, baseline, TARGET)];
    // Reported, not judged: the durable peers' own bulk calls (no HTTP in front), and Runledger
    // over HTTP against the fastest of them.
    const peerFigures = [...peerRuns].map(([name, runs]) =>
      summarize(`durable peer, ${name} of ${BATCH}: jobs/s`, 'jobs/s', runs, 'in the bench process, no HTTP'),
    );
    const best = peerFigures.reduce((a, b) => (b.median > a.median ? b : a));
    figures.push(...peerFigures, holdAgainst(summarize(`POST /v1/jobs/batch of ${BATCH}, against the fastest durable peer`, 'jobs/s', http, note), best));
    // Reported, not judged: the same batches over HTTP to a bare endpoint, and Runledger against the addBulk-only one.
    const bareFigures = [...bareRuns].map(([label, runs]) => summarize(`${label}, POST of ${BATCH}: jobs/s`, 'jobs/s', runs, `same client, ${note}`));
    figures.push(...bareFigures);
    if (bareFigures[0])
      figures.push(holdAgainst(summarize(`POST /v1/jobs/batch of ${BATCH}, against the bare addBulk endpoint`, 'jobs/s', http, note), bareFigures[0]));
    for (const [k, v] of cpu) figures.push(summarize(`CPU per job, ${k}`, 'µs', v));
    return figures;
  } finally {
    await peers?.close();
    client.close();
    for (const b of bare) {
      b.client.close();
      await stop(b.proc);
    }
    await stop(proc);
    await closeQueue(queue);
    for (const q of [producerQueue, bareQueue]) await emptyRedisQueue(opts.redisUrl, q.prefix ?? '');
    await db.drop();
  }
}
