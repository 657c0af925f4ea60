import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDb, testDb } from '../../../test/support/db';
import { takeRateToken } from '../src/index';

// The shared token buckets behind the producer's per-tenant rate limit (take_rate_token.sql).

let db: TestDb;
beforeAll(async () => {
  db = await testDb('rate_buckets', { poolSize: 8 });
});
afterAll(() => db.close());

describe('takeRateToken', () => {
  it('grants the burst, then refuses with the seconds until a token refills; keys are apart', async () => {
    const takes = [];
    for (let i = 0; i < 4; i++) takes.push(await takeRateToken(db.ledger.pool, 'tenant:a', 0.5, 3));
    expect(takes.slice(0, 3)).toEqual([{ ok: true }, { ok: true }, { ok: true }]);
    // Empty at 0.5 tokens/s: about 2 s until the next.
    expect(takes[3]).toEqual({ ok: false, retryAfterSeconds: 2 });
    expect(await takeRateToken(db.ledger.pool, 'tenant:b', 0.5, 3)).toEqual({ ok: true });
  });

  it('gives exactly the burst to concurrent takes from several connections', async () => {
    const takes = await Promise.all(Array.from({ length: 24 }, () => takeRateToken(db.ledger.pool, 'tenant:race', 0.001, 5)));
    expect(takes.filter((t) => t.ok)).toHaveLength(5);
  });
});
