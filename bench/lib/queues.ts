// Queue housekeeping for the benchmarks. BullMQ leaves a connection it was handed open on
// close(), and openQueue's Redis connection is not reachable from outside; so on Redis the bench
// builds its queues on connections of its own, and ends them. (The PostgreSQL backend's tables
// go with the bench schema.)
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { deliveryJobOptions, openQueue, QUEUE_NAME, type QueueConfig } from '../../packages/queue/src/index';

type DeliveryQueue = ReturnType<typeof openQueue>;
const ownConnections = new WeakMap<DeliveryQueue, Redis>();

/**
 * The delivery queue of `config`, connected: on Redis the same queue openQueue gives, built on a
 * connection of the bench's own (so closeQueue can end it); on PostgreSQL openQueue itself.
 */
export async function readyQueue(config: QueueConfig): Promise<DeliveryQueue> {
  if (config.backend === 'postgres') {
    const queue = openQueue(config);
    await queue.waitUntilReady();
    return queue;
  }
  const connection = new Redis(config.redisUrl ?? '', { maxRetriesPerRequest: null });
  const queue = new Queue(QUEUE_NAME, {
    connection,
    prefix: config.prefix ?? 'runledger',
    defaultJobOptions: deliveryJobOptions(config.retention),
  }) as unknown as DeliveryQueue;
  ownConnections.set(queue, connection);
  await queue.waitUntilReady();
  return queue;
}

/** Closes a queue from readyQueue, and its Redis connection. */
export async function closeQueue(queue: DeliveryQueue): Promise<void> {
  await queue.close().catch(() => {});
  ownConnections.get(queue)?.disconnect();
}

/** Removes every key of a Redis queue (`name` under `prefix`). */
export async function emptyRedisQueue(redisUrl: string, prefix: string, name = QUEUE_NAME): Promise<void> {
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const queue = new Queue(name, { connection, prefix });
  try {
    await queue.obliterate({ force: true });
  } catch (err) {
    console.error(`[bench] could not empty queue ${prefix}:${name}: ${(err as Error).message}`);
  } finally {
    await queue.close();
    connection.disconnect();
  }
}

/** Empties the queue of `config` when it lives in Redis. */
export async function emptyQueue(config: QueueConfig): Promise<void> {
  if (config.backend === 'redis' && config.redisUrl) await emptyRedisQueue(config.redisUrl, config.prefix ?? 'runledger');
}
