// HTTP admission (POST /v1/jobs) with 64 connections (autocannon, in this process), held against
// a bare Fastify endpoint that only calls `queue.add`, and against the durable peers behind the
// same endpoint (bench/procs/bare-admission.ts): a hand-written INSERT then `queue.add`, pg-boss
// `send`, graphile-worker `addJob`, each in this run's schema. Target (issue 19): ≥ 1.0× the best
// durable peer; the ratio to the queue-only endpoint is reported (toward 0.5×). Every
// server is its own process: the producer as `npm run producer` runs it (apps/producer/src/main.ts),
// once with ADMISSION_BATCH_MS=0 (each request calls ledger.admit, queue.add and recordEnqueued on
// its own; the ledger coalesces concurrent admit and recordEnqueued calls into shared statements,
// no timer) and once with the producer's group commit (ADMISSION_BATCH_MS=1, the default: a 1 ms
// window, one admission statement + addBulk + one `enqueued` events statement). Per-request logging is
// off in all three (producer LOG_LEVEL=warn). RATE_LIMIT_PER_SECOND is left unset, as a newcomer
// leaves it, so the run also shows that its default meets no 429 at 64 connections (any non-2xx
// answer fails the module). Repeats alternate between the servers.
import os from 'node:os';
import autocannon from 'autocannon';
import { freePort, isPortOpen } from '../packages/ledger/src/index';
import { benchSchema } from './bench-schema';
import { type BenchOptions, type Figure, holdAgainst, size, summarize } from './figures';
import { redisPid } from './lib/cpu';
import { CpuSplit } from './lib/cpu-split';
import { benchQueueConfig, type Proc, spawnScript, stop, waitForOutput } from './lib/processes';
import { emptyRedisQueue } from './lib/queues';

const CONNECTIONS = 64;
const TARGET = 1.0;
/** Seven servers start one after another, each compiling its TypeScript: slow on a busy machine. */
const START_TIMEOUT_MS = 180_000;
/** The durable peers (PEER of bare-admission.ts), each its own process. */
const PEERS = ['insert-add', 'pg-boss', 'graphile-worker'] as const;
const PEER_LABEL: Record<(typeof PEERS)[number], string> = {
  'insert-add': 'hand-written INSERT then queue.add',
  'pg-boss': 'pg-boss send',
  'graphile-worker': 'graphile-worker addJob',
};
const BODY = JSON.stringify({ graph: 'echo', input: { steps: 2 } });

interface Server {
  label: string;
  port: number;
  proc: Proc;
  prefix: string;
  /** Its PostgreSQL application_name. */
  app: string;
}

async function load(port: number, seconds: number) {
  const r = await autocannon({
    url: `http://127.0.0.1:${port}/v1/jobs`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: BODY,
    connections: CONNECTIONS,
    duration: seconds,
  });
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`port ${port}: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
  return r;
}

async function waitForPort(port: number, proc: Proc, what: string): Promise<void> {
  for (let end = Date.now() + START_TIMEOUT_MS; !(await isPortOpen(port)); ) {
    if (proc.child.exitCode !== null || Date.now() > end) throw new Error(`${what} did not start:\n${proc.output().slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function run(opts: BenchOptions): Promise<Figure[]> {
  if (!opts.redisUrl) throw new Error('http-admission needs Redis');
  const seconds = size(opts, { smoke: 1, quick: 5, full: 15 });
  const repeats = size(opts, { smoke: 1, quick: 3, full: 5 });
  const db = await benchSchema(opts, 'http');
  const servers: Server[] = [];
  const { RATE_LIMIT_PER_SECOND: _unset, ...inherited } = process.env;
  try {
    const start = async (label: string, entry: string, env: Record<string, string>, ready: (s: Server) => Promise<void>) => {
      const port = await freePort();
      const { prefix = '' } = benchQueueConfig('redis', opts.databaseUrl, db.schema, opts.redisUrl);
      // Named backends: PostgreSQL's CPU per request is attributed to this server (lib/cpu-split.ts).
      const app = `admission-${servers.length}`;
      const proc = spawnScript(entry, { ...inherited, PORT: String(port), REDIS_URL: opts.redisUrl ?? '', QUEUE_PREFIX: prefix, PGAPPNAME: app, ...env });
      const server = { label, port, proc, prefix, app };
      servers.push(server);
      await ready(server);
    };
    const producerEnv = (batchMs: number) => ({
      DATABASE_URL: opts.databaseUrl,
      DB_SCHEMA: db.schema,
      QUEUE_BACKEND: 'redis',
      ADMISSION_BATCH_MS: String(batchMs),
      LOG_LEVEL: 'warn',
      // No worker drains these queues: at 6,000 admissions/s the default backlog bound (100,000
      // waiting deliveries) is reached within the repeats, and admissions rightly answer 503.
      MAX_BACKLOG: '0',
    });
    await start('bare Fastify endpoint, queue.add only', 'bench/procs/bare-admission.ts', { PEER: 'queue' }, (s) =>
      waitForOutput(s.proc, /listening/, s.label, START_TIMEOUT_MS),
    );
    for (const peer of PEERS) {
      const env = { PEER: peer, DATABASE_URL: opts.databaseUrl, DB_SCHEMA: db.schema };
      await start(`Fastify endpoint, ${PEER_LABEL[peer]}`, 'bench/procs/bare-admission.ts', env, (s) =>
        waitForOutput(s.proc, /listening/, s.label, START_TIMEOUT_MS),
      );
    }
    await start('producer POST /v1/jobs, ADMISSION_BATCH_MS=0 (ledger coalescing)', 'apps/producer/src/main.ts', producerEnv(0), (s) =>
      waitForPort(s.port, s.proc, s.label),
    );
    await start('producer POST /v1/jobs, group commit 1 ms', 'apps/producer/src/main.ts', producerEnv(1), (s) => waitForPort(s.port, s.proc, s.label));

    for (const s of servers) await load(s.port, 1); // warm-up: JIT, pools, connections
    const rps = new Map<string, number[]>(servers.map((s) => [s.label, []]));
    const p99 = new Map<string, number[]>(servers.map((s) => [s.label, []]));
    // CPU per request: the server process alone, and the whole machine (server, PostgreSQL,
    // Redis, autocannon and the rest), which is what bounds throughput when the cores are shared.
    // Beside them, this server's PostgreSQL backends and the Redis server, and their sum with the
    // server process and autocannon: CPU a request costs wherever it is spent, from /proc, which
    // other users of the machine do not inflate as they inflate the whole machine's.
    const serverCpu = new Map<string, number[]>(servers.map((s) => [s.label, []]));
    const machineCpu = new Map<string, number[]>(servers.map((s) => [s.label, []]));
    const splitCpu = new Map<string, Map<string, number[]>>(servers.map((s) => [s.label, new Map()]));
    const redis = await redisPid(opts.redisUrl);
    for (let r = 0; r < repeats; r++) {
      for (const s of servers) {
        const split = await CpuSplit.open(opts.databaseUrl, { server: s.proc.child.pid ?? 0 }, [s.app], redis);
        try {
          const self = process.cpuUsage();
          const { result, ms, machineMs } = await split.during(() => load(s.port, seconds));
          const mine = process.cpuUsage(self);
          const n = result.requests.total;
          rps.get(s.label)?.push(result.requests.average);
          p99.get(s.label)?.push(result.latency.p99);
          serverCpu.get(s.label)?.push(((ms.server ?? 0) * 1000) / n);
          machineCpu.get(s.label)?.push((machineMs * 1000) / n);
          const parts: Record<string, number> = {
            'PostgreSQL backends': ms[`PostgreSQL for ${s.app}`] ?? 0,
            'Redis server': ms['Redis server'] ?? 0,
            'autocannon (bench process)': (mine.user + mine.system) / 1000,
          };
          parts['server + PostgreSQL backends + Redis + autocannon'] = (ms.server ?? 0) + Object.values(parts).reduce((a, b) => a + b, 0);
          const into = splitCpu.get(s.label)!;
          for (const [k, v] of Object.entries(parts)) into.set(k, [...(into.get(k) ?? []), (v * 1000) / n]);
        } finally {
          await split.close();
        }
      }
    }
    const note = `${CONNECTIONS} connections, ${seconds} s per repeat, autocannon in the bench process`;
    const [bare, ...rest] = servers.map((s) => s.label);
    const peers = rest.slice(0, PEERS.length);
    const producers = rest.slice(PEERS.length);
    const bareRps = summarize(`${bare}: req/s`, 'req/s', rps.get(bare!) ?? [], note);
    const bareP99 = summarize(`${bare}: p99`, 'ms', p99.get(bare!) ?? []);
    const cpuFigures = (label: string) => [
      summarize(`${label}: server process CPU per request`, 'µs', serverCpu.get(label) ?? []),
      summarize(`${label}: machine CPU per request`, 'µs', machineCpu.get(label) ?? [], `all ${os.cpus().length} cores, from /proc/stat, all users`),
      ...[...(splitCpu.get(label) ?? [])].map(([k, v]) => summarize(`${label}: ${k} CPU per request`, 'µs', v)),
    ];
    const bareCpu = cpuFigures(bare!);
    const figures = [bareRps, bareP99, ...bareCpu];
    const peerRps = peers.map((label) => summarize(`${label}: req/s`, 'req/s', rps.get(label) ?? [], note));
    for (const [i, label] of peers.entries()) {
      figures.push(holdAgainst(peerRps[i]!, bareRps), summarize(`${label}: p99`, 'ms', p99.get(label) ?? []));
      figures.push(...cpuFigures(label));
    }
    const best = peerRps.reduce((a, b) => (b.median > a.median ? b : a));
    for (const label of producers) {
      const ours = summarize(`${label}: req/s`, 'req/s', rps.get(label) ?? [], note);
      figures.push(holdAgainst(ours, bareRps));
      for (const peer of peerRps)
        figures.push(holdAgainst({ ...ours, name: `${label}: req/s vs ${peer.name.replace(/: req\/s$/, '')}` }, peer, peer === best ? TARGET : undefined));
      figures.push(holdAgainst(summarize(`${label}: p99`, 'ms', p99.get(label) ?? []), bareP99));
      // No ratio to a part the bare endpoint does not have (its PostgreSQL backends: 0).
      figures.push(...cpuFigures(label).map((f, i) => (bareCpu[i]!.median > 0 ? holdAgainst(f, bareCpu[i]!) : f)));
    }
    return figures;
  } finally {
    await Promise.all(servers.map((s) => stop(s.proc)));
    for (const s of servers) await emptyRedisQueue(opts.redisUrl, s.prefix);
    await db.drop();
  }
}
