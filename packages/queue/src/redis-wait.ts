import { Redis } from 'ioredis';
import type { QueueConfig } from './index';

export interface RedisWaitOptions {
  /** How long to keep trying, in ms. */
  deadlineMs: number;
  /** Told once, at the first failed try, with `host:port` and the error (to say "retrying"). */
  onFirstFailure?: (address: string, error: Error) => void;
}

/** Thrown when Redis did not answer within the deadline. */
export class RedisUnreachableError extends Error {
  override name = 'RedisUnreachableError';
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Resolves once the queue's Redis answers PING, trying again with backoff (250 ms, doubling up to
 * 4 s) until `deadlineMs` passed; then throws RedisUnreachableError naming `host:port` (never the
 * password) and the last error. Resolves at once for the PostgreSQL backend. Each try is one
 * connection without ioredis's own reconnects, so a down Redis gives one error, not a stream.
 */
export async function waitForRedis(config: QueueConfig, options: RedisWaitOptions): Promise<void> {
  if (config.backend !== 'redis' || !config.redisUrl) return;
  // A cluster node answers PING like a single server.
  const url = config.redisUrl.replace(/^redis-cluster:/, 'redis:');
  const u = new URL(url);
  const address = `${u.hostname}:${u.port || 6379}`;
  const end = Date.now() + options.deadlineMs;
  for (let delay = 250, tries = 1; ; delay = Math.min(delay * 2, 4_000), tries++) {
    const redis = new Redis(url, {
      lazyConnect: true,
      retryStrategy: () => null,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      connectTimeout: 2_000,
      commandTimeout: 2_000,
    });
    // connect() rejects with "Connection is closed."; the cause (ECONNREFUSED, ENOTFOUND) comes as an event.
    let cause: Error | undefined;
    redis.on('error', (e: Error) => {
      cause = e;
    });
    try {
      await redis.connect();
      await redis.ping();
      return;
    } catch (caught) {
      const err = cause ?? (caught as Error);
      if (tries === 1) options.onFirstFailure?.(address, err);
      if (Date.now() + delay > end) {
        const seconds = Math.round(options.deadlineMs / 1000);
        throw new RedisUnreachableError(`Redis at ${address} did not answer within ${seconds} s (${err.message}): start it, or fix REDIS_URL.`, {
          cause: err,
        });
      }
    } finally {
      redis.disconnect();
    }
    await sleep(delay);
  }
}
