import { type Queryable, wrapDbError } from './db';
import { sql } from './sql';

/** The answer of takeRateToken: a token, or how many whole seconds until the bucket holds one. */
export type RateTake = { ok: true } | { ok: false; retryAfterSeconds: number };

/**
 * Takes one token from the token bucket `key` stored in this database (shared by every process
 * using it): up to `burst` tokens, refilled at `perSecond`. Throws LedgerError
 * DATABASE_UNAVAILABLE when PostgreSQL is unreachable.
 */
export async function takeRateToken(db: Queryable, key: string, perSecond: number, burst: number): Promise<RateTake> {
  let row: { taken: boolean; tokens: number } | undefined;
  try {
    row = (await db.query<{ taken: boolean; tokens: number }>(sql('take_rate_token'), [key, perSecond, burst])).rows[0];
  } catch (err) {
    throw wrapDbError(err);
  }
  if (row?.taken) return { ok: true };
  return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - (row?.tokens ?? 0)) / perSecond)) };
}
