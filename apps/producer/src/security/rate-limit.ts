/** The answer of a rate limiter's take. */
export type Take = { ok: true } | { ok: false; retryAfterSeconds: number };

/** The bucket a tenant's requests and its crons' firings spend (RATE_LIMIT_PER_SECOND). */
export const tenantBucket = (tenant: string): string => `tenant:${tenant}`;

/** Token buckets by key: in this process (TokenBuckets) or shared by every producer (sharedBuckets). */
export interface RateLimiter {
  take(key: string): Take | Promise<Take>;
}

/** Takes a token from a bucket stored where every producer process sees it (the ledger's takeRateToken). */
export type SharedTake = (key: string, perSecond: number, burst: number) => Promise<Take>;

/** Token buckets of `perSecond` and `burst` kept by `take` (e.g. in PostgreSQL), shared by every producer process. */
export function sharedBuckets(take: SharedTake, perSecond: number, burst: number): RateLimiter {
  return { take: (key) => take(key, perSecond, burst) };
}

/**
 * In-memory token buckets, one per key (a tenant, or a client address for failed logins): each
 * holds up to `burst` tokens and refills at `perSecond`. Per process: with N producer replicas a
 * tenant gets up to N times the rate. Beyond `maxKeys` keys the oldest bucket is dropped.
 */
export class TokenBuckets implements RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    private readonly maxKeys = 10_000,
    private readonly now: () => number = () => performance.now(),
  ) {
    if (!(perSecond > 0) || !(burst >= 1)) throw new Error('TokenBuckets needs perSecond > 0 and burst >= 1');
  }

  /** Takes one token for `key`; when none is left, says how many whole seconds until one is. */
  take(key: string): Take {
    const now = this.now();
    let bucket = this.buckets.get(key);
    if (!bucket) {
      if (this.buckets.size >= this.maxKeys) {
        const oldest = this.buckets.keys().next().value;
        if (oldest !== undefined) this.buckets.delete(oldest);
      }
      bucket = { tokens: this.burst, at: now };
      this.buckets.set(key, bucket);
    } else {
      bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond);
      bucket.at = now;
    }
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { ok: true };
    }
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / this.perSecond)) };
  }
}
