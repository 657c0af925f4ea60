import { type Ledger, listWorkers, type Queryable, schemaVersion, serverVersion, unservedLine } from '@runledger/ledger/core';
import type { DeliveryData } from '@runledger/queue';
import type { Queue } from 'bullmq';
import { Redis } from 'ioredis';

/** One line of `runledger doctor`: what was checked, what was found, what to do when it failed. */
export interface CheckResult {
  name: string;
  status: 'ok' | 'fail' | 'skip';
  detail: string;
  fix?: string;
}

const ok = (name: string, detail: string): CheckResult => ({ name, status: 'ok', detail });
const fail = (name: string, detail: string, fix: string): CheckResult => ({ name, status: 'fail', detail, fix });

/** A heartbeat newer than this counts as a live worker (workers beat at least once a second). */
export const LIVE_WORKER_MS = 5_000;

/** Rejects after `ms` so a silent server cannot hang `doctor`. */
export function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** PostgreSQL answers, and its version. */
export async function checkPostgres(db: Queryable, where: string): Promise<CheckResult> {
  try {
    const { version } = await serverVersion(db);
    return ok('PostgreSQL', `${version} at ${where}`);
  } catch (err) {
    return fail('PostgreSQL', `unreachable at ${where}: ${(err as Error).message}`, 'start PostgreSQL, or point DATABASE_URL at a running server.');
  }
}

/** The ledger's migrations are all applied in the schema. */
export async function checkSchema(pool: Ledger['pool'], schema: string): Promise<CheckResult> {
  const { current, latest } = await schemaVersion(pool);
  if (current === latest) return ok('schema', `${schema} at migration ${current} of ${latest}`);
  if (current > latest)
    return fail('schema', `${schema} is at migration ${current}, newer than this code (${latest})`, 'upgrade Runledger to the version that migrated it.');
  return fail(
    'schema',
    `${schema} is at migration ${current} of ${latest}`,
    'run `npx runledger migrate` (or `npm run migrate`) with this DATABASE_URL and DB_SCHEMA.',
  );
}

/** Workers heartbeated within the last few seconds. */
export async function checkWorkers(db: Queryable): Promise<CheckResult> {
  const workers = await listWorkers(db);
  const live = workers.filter((w) => w.seenMsAgo <= LIVE_WORKER_MS);
  // Each with the graphs and versions it announced (`echo@1.2.0`), so a pool or version nobody serves shows.
  const serving = (w: (typeof workers)[0]) => {
    const versions = Object.entries((w.info.versions ?? {}) as Record<string, string>);
    return versions.length > 0 ? `${w.workerId} (${versions.map(([g, v]) => `${g}@${v}`).join(' ')})` : w.workerId;
  };
  if (live.length > 0) return ok('workers', `${live.length} live: ${live.map(serving).join(', ')}`);
  const last = workers[0];
  const seen = last ? `; last heartbeat ${Math.round(last.seenMsAgo / 1000)} s ago from ${last.workerId}` : '; none ever seen';
  return fail(
    'workers',
    `no heartbeat in the last ${LIVE_WORKER_MS / 1000} s${seen}`,
    'start workers with `npm run worker` (or `npm start`); accepted jobs wait until one runs.',
  );
}

/** Every job ready to run has a live worker serving its graph and version (a pool or version nobody serves leaves its jobs waiting). */
export async function checkServed(ledger: Ledger): Promise<CheckResult> {
  const waiting = await ledger.countWaitingForVersion();
  if (waiting.length === 0) return ok('served', 'every job ready to run has a live worker serving its graph and version');
  const versions = waiting.map((w) => (w.version === null ? w.graph : `${w.graph} at ${w.version}`));
  return fail(
    'served',
    waiting.map(unservedLine).join('; '),
    `start a worker serving ${versions.join(', ')} (\`runledger worker --graphs <graph>\` built at that version: RUNLEDGER_BUILD_ID or package.json), or move the jobs with \`runledger upgrade\`.`,
  );
}

/** The queue answers a count of its waiting, active and delayed deliveries. */
export async function checkQueue(queue: Queue<DeliveryData>, label: string): Promise<CheckResult> {
  try {
    const counts = await within(3_000, label, queue.getJobCounts('waiting', 'active', 'delayed'));
    return ok('queue', `${label}: ${counts.waiting ?? 0} waiting, ${counts.active ?? 0} active, ${counts.delayed ?? 0} delayed`);
  } catch (err) {
    return fail(
      'queue',
      `${label} unreachable: ${(err as Error).message}`,
      'check REDIS_URL / QUEUE_BACKEND (postgres: DATABASE_URL must allow creating the queue schema).',
    );
  }
}

async function configValue(redis: Redis, key: string): Promise<string> {
  const reply = (await redis.config('GET', key)) as string[];
  return reply[1] ?? '';
}

/** Redis answers, never evicts keys, and persists to disk (AOF or RDB). */
export async function checkRedis(url: string): Promise<CheckResult[]> {
  const redis = new Redis(url, { lazyConnect: true, connectTimeout: 2_000, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
  let lastError: Error | undefined;
  redis.on('error', (err) => {
    lastError = err;
  });
  try {
    await within(3_000, 'Redis', redis.connect());
    const info = await redis.info('server');
    const version = /redis_version:(\S+)/.exec(info)?.[1] ?? '?';
    const results = [ok('Redis', `${version} reachable`)];
    let policy: string;
    let appendonly: string;
    let save: string;
    try {
      [policy, appendonly, save] = await Promise.all([configValue(redis, 'maxmemory-policy'), configValue(redis, 'appendonly'), configValue(redis, 'save')]);
    } catch (err) {
      results.push(
        fail(
          'Redis config',
          `CONFIG GET refused (${(err as Error).message})`,
          "check in your provider's settings that maxmemory-policy is noeviction and persistence is on.",
        ),
      );
      return results;
    }
    results.push(
      policy === 'noeviction'
        ? ok('Redis eviction', 'maxmemory-policy noeviction')
        : fail(
            'Redis eviction',
            `maxmemory-policy is ${policy}: Redis may drop queue keys under memory pressure`,
            'set `maxmemory-policy noeviction` in redis.conf (now: CONFIG SET maxmemory-policy noeviction).',
          ),
    );
    const persisted = appendonly === 'yes' || save.trim() !== '';
    results.push(
      persisted
        ? ok('Redis persistence', appendonly === 'yes' ? 'AOF on' : `RDB snapshots (save ${save})`)
        : fail(
            'Redis persistence',
            'off (appendonly no, no RDB save points): a restart empties the queue',
            'set `appendonly yes` and `appendfsync everysec` in redis.conf (the reconciler re-delivers lost keys, but only after a sweep).',
          ),
    );
    return results;
  } catch (err) {
    return [
      fail('Redis', `unreachable at ${url.replace(/\/\/[^@/]*@/, '//***@')}: ${(lastError ?? (err as Error)).message}`, 'start Redis, or fix REDIS_URL.'),
    ];
  } finally {
    redis.disconnect();
  }
}
