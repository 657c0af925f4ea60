/** The answer of TokenBuckets.take. */
export type Take = { ok: true } | { ok: false; retryAfterSeconds: number };

/**
 * In-memory token buckets, one per key (a tenant, or a client address for failed logins): each
 * holds up to `burst` tokens and refills at `perSecond`. Per process: with N producer replicas a
 * tenant gets up to N times the rate. Beyond `maxKeys` keys the oldest bucket is dropped.
 */
export class TokenBuckets {
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
