import { type ConnectionOptions, createPostgresBackend, type Processor, Queue, Worker, type WorkerOptions, withBackend } from 'bullmq';
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { DeliveryData } from './delivery';
import { type DeliveryRetention, deliveryJobOptions } from './retention';

export {
  DELIVERY_LOCK_MS,
  type DeliveryData,
  type DeliveryLabel,
  type DeliverySchedule,
  deliver,
  deliveryId,
  deliveryName,
  handOffThread,
  isQueued,
  isQueuedOrTaken,
  queueHas,
  reachedQueue,
  scheduleOptions,
  sendAdmitted,
  settleWithin,
} from './delivery';
export { type ActionDeps, type ActionResult, bestEffort, followUp, type OperatorActions, operatorActions, type Unconfirmed } from './operator-actions';
export { PeriodicPass } from './periodic-pass';
export { Reconciler, type ReconcilerOptions, type SweepReport } from './reconciler';
export { RedisUnreachableError, type RedisWaitOptions, waitForRedis } from './redis-wait';
export { DEFAULT_RETENTION, type DeliveryRetention, deliveryJobOptions, KEPT_LOG_LINES } from './retention';

/** The one BullMQ queue every Runledger job reference goes through. */
export const QUEUE_NAME = 'runledger';

export interface QueueConfig {
  /** `redis` (needs `redisUrl`) or `postgres` (BullMQ's PostgreSQL backend on `databaseUrl`). */
  backend: 'redis' | 'postgres';
  /** `redis://…`, `rediss://…`, or `redis-cluster://host:port` (one node of a Redis Cluster). */
  redisUrl?: string;
  databaseUrl?: string;
  /** Ledger schema; the PostgreSQL backend's queue tables go to `<schema>_queue`. */
  schema?: string;
  /** Redis key prefix (hash-tag it for Redis Cluster, e.g. `{runledger}`). Default `runledger`. */
  prefix?: string;
  /** How long finished deliveries stay visible (Bull Board). Default DEFAULT_RETENTION: a day, 10,000 at most; failed ones 7 days. */
  retention?: DeliveryRetention;
}

function pgConnection(config: QueueConfig) {
  if (!config.databaseUrl) throw new Error('QUEUE_BACKEND=postgres needs DATABASE_URL');
  // BullMQ migrates its own schema on connect, under its own advisory lock.
  return { connectionString: config.databaseUrl, schema: `${config.schema ?? 'public'}_queue`, max: 5, migrate: true };
}

function redisConnection(config: QueueConfig, forWorker: boolean): Redis | Cluster {
  if (!config.redisUrl) throw new Error('QUEUE_BACKEND=redis needs REDIS_URL');
  // Workers must block forever on Redis; producers fail fast so a Redis outage cannot stall admission.
  const options: RedisOptions = forWorker ? { maxRetriesPerRequest: null } : { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 2_000 };
  const redis = config.redisUrl.startsWith('redis-cluster://') ? cluster(config.redisUrl, options) : new Redis(config.redisUrl, options);
  redis.on('error', () => {});
  return redis;
}

/**
 * `redis-cluster://[user:password@]host:port`: any one node of a Redis Cluster; the client
 * learns the others, follows MOVED/ASK and the new master after a failover.
 */
function cluster(url: string, options: RedisOptions): Cluster {
  const u = new URL(url);
  const auth = { username: decodeURIComponent(u.username) || undefined, password: decodeURIComponent(u.password) || undefined };
  return new Cluster([{ host: u.hostname, port: Number(u.port || 6379) }], {
    redisOptions: { ...options, ...auth },
    enableOfflineQueue: options.enableOfflineQueue ?? true,
  });
}

/** Opens the queue for adding deliveries (producer, reconciler). */
export function openQueue(config: QueueConfig): Queue<DeliveryData> {
  if (config.backend === 'postgres') {
    const { Queue: PgQueue } = withBackend(createPostgresBackend);
    return new PgQueue<DeliveryData>(QUEUE_NAME, {
      connection: pgConnection(config),
      defaultJobOptions: deliveryJobOptions(config.retention),
    }) as unknown as Queue<DeliveryData>;
  }
  return new Queue<DeliveryData>(QUEUE_NAME, {
    connection: redisConnection(config, false) as unknown as ConnectionOptions,
    prefix: config.prefix ?? 'runledger',
    defaultJobOptions: deliveryJobOptions(config.retention),
  });
}

/**
 * Opens a BullMQ worker on the queue. The Postgres lease, not BullMQ's lock, decides who runs a
 * job. The retention applies to a delivery added without one (an older producer's), too.
 */
export function openWorker(config: QueueConfig, processor: Processor<DeliveryData>, workerOptions: Omit<WorkerOptions, 'connection'>): Worker<DeliveryData> {
  const { removeOnComplete, removeOnFail } = deliveryJobOptions(config.retention);
  const options = { removeOnComplete, removeOnFail, ...workerOptions };
  if (config.backend === 'postgres') {
    const { Worker: PgWorker } = withBackend(createPostgresBackend);
    return new PgWorker<DeliveryData>(QUEUE_NAME, processor, { ...options, connection: pgConnection(config) }) as unknown as Worker<DeliveryData>;
  }
  return new Worker<DeliveryData>(QUEUE_NAME, processor, {
    ...options,
    prefix: config.prefix ?? 'runledger',
    connection: redisConnection(config, true) as unknown as ConnectionOptions,
  });
}
