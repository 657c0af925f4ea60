import type { Queryable } from './db';
import { run } from './sql';

/** The answer of takeRateToken: a token, or how many whole seconds until the bucket holds one. */
export type RateTake = { ok: true } | { ok: false; retryAfterSeconds: number };

/**
 * Takes one token from the token bucket `key` stored in this database (shared by every process
 * using it): up to `burst` tokens, refilled at `perSecond`. Throws LedgerError
 * DATABASE_UNAVAILABLE when PostgreSQL is unreachable.
 */
export async function takeRateToken(db: Queryable, key: string, perSecond: number, burst: number): Promise<RateTake> {
  const row = (await run<{ taken: boolean; tokens: number }>(db, 'take_rate_token', [key, perSecond, burst])).rows[0];
  if (row?.taken) return { ok: true };
  return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - (row?.tokens ?? 0)) / perSecond)) };
}
