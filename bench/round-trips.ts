// Round trips per echo job (2 steps): every PostgreSQL query (pg runs one at a time per
// connection, so one query is one round trip) and every Redis command, counted in this process
// while an in-process RunledgerWorker (concurrency 16, its graphs wrapped as a worker process
// wraps them) runs a batch end to end, next to the bare graph.invoke loop with the unfenced
// PostgresSaver (sequential). Start-up, heartbeats and sweeps of the worker count too (spread
// over the batch). The profile behind the e2e figures: on this machine a loopback round trip
// costs tens of microseconds of kernel time on each side.
import { randomUUID } from 'node:crypto';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { Redis } from 'ioredis';
import type pg from 'pg';
import { RunledgerWorker } from '../apps/worker/src/index';
import { instrumentGraphs } from '../apps/worker/src/telemetry-graphs';
import { createPool, Ledger } from '../packages/ledger/src/index';
import { builtInGraphs } from '../packages/runtime/src/index';
import { benchSchema } from './bench-schema';
import { type BenchOptions, type Figure, holdAgainst, size, summarize } from './figures';
import { admitAndDeliver, waitCompleted } from './lib/fleet';
import { benchQueueConfig } from './lib/processes';
import { closeQueue, emptyQueue, readyQueue } from './lib/queues';

type Counts = Map<string, number>;

/** What a query is, by its text or statement name. */
function kind(q: unknown): string {
  const { text, name } = (typeof q === 'string' ? { text: q } : (q ?? {})) as { text?: string; name?: string };
  if (name?.startsWith('runledger_')) return `ledger ${name.slice('runledger_'.length)}`;
  if (text === 'BEGIN' || text === 'COMMIT' || text === 'ROLLBACK') return 'saver BEGIN/COMMIT';
  const table = text && /checkpoint_blobs|checkpoint_writes|checkpoints/.exec(text)?.[0];
  if (table) return `saver ${/^\s*(INSERT|SELECT|UPDATE|DELETE)/i.exec(text)?.[1]?.toUpperCase() ?? 'query'} ${table}`;
  return 'ledger other';
}

/** Counts every query of the pool's clients, and every Redis command of this process, while `work` runs. */
async function counting(pool: pg.Pool, work: () => Promise<void>): Promise<Counts> {
  const counts: Counts = new Map();
  const add = (k: string) => counts.set(k, (counts.get(k) ?? 0) + 1);
  const onConnect = (client: pg.PoolClient) => {
    const query = client.query.bind(client) as (...a: unknown[]) => unknown;
    client.query = ((...args: unknown[]) => {
      add(kind(args[0]));
      return query(...args);
    }) as typeof client.query;
  };
  // Only connections opened from now on count: the pool starts empty.
  pool.on('connect', onConnect);
  const redisSend = Redis.prototype.sendCommand;
  Redis.prototype.sendCommand = function (this: Redis, ...args: Parameters<typeof redisSend>) {
    add('redis');
    return redisSend.apply(this, args);
  };
  try {
    await work();
  } finally {
    Redis.prototype.sendCommand = redisSend;
  }
  return counts;
}

const total = (c: Counts, pred: (k: string) => boolean) => [...c].filter(([k]) => pred(k)).reduce((a, [, n]) => a + n, 0);

export async function run(opts: BenchOptions): Promise<Figure[]> {
  const jobs = size(opts, { smoke: 32, quick: 200, full: 1_000 });
  const db = await benchSchema(opts, 'round_trips');
  const q = benchQueueConfig(opts.redisUrl ? 'redis' : 'postgres', opts.databaseUrl, db.schema, opts.redisUrl);
  // Wrapped as a worker process wraps them (spans off, rejected-write metrics on).
  const graphs = instrumentGraphs(new Map(builtInGraphs.map((g) => [g.name, g])), { onRejectedWrites: () => undefined });
  // The worker's and the bare loop's own pools, so the bench's progress polls do not count.
  const workerPool = createPool({ connectionString: opts.databaseUrl, schema: db.schema, max: 20 });
  const barePool = createPool({ connectionString: opts.databaseUrl, schema: db.schema, max: 20 });
  const ledger = new Ledger(workerPool);
  const worker = new RunledgerWorker({ ledger, queueConfig: q, graphs, workerId: 'bench-round-trips', schema: db.schema, concurrency: 16 });
  const queue = await readyQueue(q);
  try {
    const runledger = await counting(workerPool, async () => {
      await worker.start();
      await admitAndDeliver(
        db.ledger,
        queue,
        Array.from({ length: jobs }, () => ({ graph: 'echo', input: { steps: 2 } })),
      );
      await waitCompleted(db.ledger, 0, jobs);
      await worker.close();
    });
    const graph = graphs.get('echo')!.build(new PostgresSaver(barePool, undefined, { schema: db.schema }));
    const bare = await counting(barePool, async () => {
      for (let n = 0; n < jobs; n++) {
        const threadId = randomUUID();
        const ctx = { jobId: threadId, threadId, fencingToken: 1, attempt: 1, signal: new AbortController().signal };
        await graph.invoke({ steps: 2 }, { configurable: { thread_id: threadId, runledger: ctx }, durability: 'sync' });
      }
    });
    const detail = [...runledger]
      .filter(([k]) => k !== 'redis')
      .sort((a, b) => b[1] - a[1])
      .map(([k, n]) => `${k} ${(n / jobs).toFixed(1)}`)
      .join(', ');
    const barePg = summarize('bare graph.invoke + PostgresSaver: PostgreSQL queries', 'per run', [total(bare, (k) => k !== 'redis') / jobs]);
    return [
      barePg,
      holdAgainst(summarize('Runledger end to end: PostgreSQL queries', 'per job', [total(runledger, (k) => k !== 'redis') / jobs], detail), barePg),
      summarize('Runledger end to end: Redis commands', 'per job', [(runledger.get('redis') ?? 0) / jobs], `${q.backend} queue`),
    ];
  } finally {
    await worker.close().catch(() => {});
    await Promise.all([workerPool.end(), barePool.end()]);
    await closeQueue(queue);
    await emptyQueue(q);
    await db.drop();
  }
}
