// Redis memory taken by the deliveries kept for Bull Board with the default retention (a day,
// at most 10,000 completed): echo jobs run end to end through one worker process (c=16), then
// Redis is read twice: `INFO memory` used_memory before and after (the whole server: other
// clients of a shared Redis add noise), and MEMORY USAGE summed over this run's own keys (its
// queue prefix: exact). Past 10,000 jobs the count bound holds the kept set flat, so a run of
// fewer jobs is extrapolated linearly to 10,000 and said so. Redis only; reported, no target.
import { Redis } from 'ioredis';
import { DEFAULT_RETENTION } from '../packages/queue/src/index';
import { benchSchema } from './bench-schema';
import { type BenchOptions, type Figure, size, summarize } from './figures';
import { Fleet } from './lib/fleet';
import { benchQueueConfig } from './lib/processes';

const CONCURRENCY = 16;
const CHUNK = 1_000;
const MiB = 2 ** 20;

async function usedMemory(redis: Redis): Promise<number> {
  const line = (await redis.info('memory')).match(/^used_memory:(\d+)/m);
  if (!line) throw new Error('INFO memory has no used_memory');
  return Number(line[1]);
}

/** Bytes of every key under `prefix` (MEMORY USAGE, all samples), and how many keys. */
async function prefixBytes(redis: Redis, prefix: string): Promise<{ bytes: number; keys: number }> {
  let bytes = 0;
  let keys = 0;
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1_000);
    cursor = next;
    const pipe = redis.pipeline();
    for (const key of batch) pipe.memory('USAGE', key, 'SAMPLES', 0);
    for (const [, b] of (await pipe.exec()) ?? []) bytes += Number(b ?? 0);
    keys += batch.length;
  } while (cursor !== '0');
  return { bytes, keys };
}

export async function run(opts: BenchOptions): Promise<Figure[]> {
  if (!opts.redisUrl) return [];
  const jobs = size(opts, { smoke: 100, quick: 2_000, full: 10_000 });
  const db = await benchSchema(opts, 'keep');
  const q = benchQueueConfig('redis', opts.databaseUrl, db.schema, opts.redisUrl);
  const redis = new Redis(opts.redisUrl);
  const fleet = await Fleet.start(db, q, opts.databaseUrl, 1, CONCURRENCY);
  try {
    const before = await usedMemory(redis);
    for (let done = 0; done < jobs; done += CHUNK) await fleet.batch(Math.min(CHUNK, jobs - done), 'echo', () => ({ steps: 2 }));
    // The worker writes a delivery's last log lines just after the ledger completes it.
    await new Promise((r) => setTimeout(r, 2_000));
    const after = await usedMemory(redis);
    const own = await prefixBytes(redis, `${q.prefix}:runledger`);
    const scale = 10_000 / Math.min(jobs, DEFAULT_RETENTION.completedCount);
    const note = `${jobs} echo jobs, default retention (${DEFAULT_RETENTION.completedHours} h / ${DEFAULT_RETENTION.completedCount} kept)`;
    const extrapolated = jobs < 10_000 ? `, × ${scale.toFixed(1)} from ${jobs} jobs (linear: every kept delivery costs the same)` : '';
    return [
      summarize('Redis used_memory delta (whole server)', 'MiB', [(after - before) / MiB], `${note}; a shared Redis adds other clients' noise`),
      summarize("kept deliveries' keys (MEMORY USAGE)", 'MiB', [own.bytes / MiB], `${note}; ${own.keys} keys under the run's prefix`),
      summarize(
        'per kept delivery',
        'bytes',
        [own.bytes / Math.min(jobs, DEFAULT_RETENTION.completedCount)],
        'data, return value, progress, log, index entries',
      ),
      summarize('at 10,000 jobs (the count bound: flat beyond)', 'MiB', [(own.bytes * scale) / MiB], `MEMORY USAGE${extrapolated}`),
    ];
  } finally {
    await fleet.stop();
    redis.disconnect();
    await db.drop();
  }
}
