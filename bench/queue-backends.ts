// End-to-end echo (2 steps) throughput with BullMQ's PostgreSQL backend (QUEUE_BACKEND=postgres,
// queue tables in <schema>_queue of the same server) held against the Redis backend: one
// worker process at concurrency 16 each, both up at once on their own schemas, repeats
// alternating. Reported, no target.
import { benchSchema } from './bench-schema';
import { type BenchOptions, type Figure, holdAgainst, size, summarize } from './figures';
import { Fleet } from './lib/fleet';
import { benchQueueConfig } from './lib/processes';

const CONCURRENCY = 16;

export async function run(opts: BenchOptions): Promise<Figure[]> {
  if (!opts.redisUrl) throw new Error('queue-backends needs Redis');
  const runs = size(opts, { smoke: 48, quick: 400, full: 2_000 });
  const repeats = size(opts, { smoke: 1, quick: 3, full: 5 });
  const backends = ['redis', 'postgres'] as const;
  const dbs = await Promise.all(backends.map((b) => benchSchema(opts, `queue_${b}`)));
  const fleets: Fleet[] = [];
  try {
    for (const [i, backend] of backends.entries()) {
      const db = dbs[i]!;
      fleets.push(await Fleet.start(db, benchQueueConfig(backend, opts.databaseUrl, db.schema, opts.redisUrl), opts.databaseUrl, 1, CONCURRENCY));
    }
    for (const fleet of fleets) await fleet.batch(CONCURRENCY * 4, 'echo', () => ({ steps: 2 })); // warm-up
    const samples: number[][] = backends.map(() => []);
    for (let r = 0; r < repeats; r++) {
      for (const [i, fleet] of fleets.entries()) samples[i]!.push(await fleet.batch(runs, 'echo', () => ({ steps: 2 })));
    }
    const note = `${runs} jobs per repeat, 1 worker process, c=${CONCURRENCY}`;
    const redis = summarize('echo end to end, Redis backend', 'runs/s', samples[0]!, note);
    return [redis, holdAgainst(summarize('echo end to end, PostgreSQL backend', 'runs/s', samples[1]!, note), redis)];
  } finally {
    await Promise.all(fleets.map((f) => f.stop()));
    for (const db of dbs) await db.drop();
  }
}
