import { afterEach, describe, expect, it } from 'vitest';
import { parseSecurityEnv } from '../src/security';
import { KEYS, type SecuredHarness, startSecuredApp } from './security-harness';

// The rate limit as the producer process configures it from its environment: off unless asked
// for, so a load test of one backend service meets no throttle; on, it answers 429 in the API's shape.

const env = { DATABASE_URL: 'postgres://postgres@127.0.0.1/x', RUNLEDGER_API_KEYS: `acme:${KEYS.acme}`, RUNLEDGER_ADMIN_KEY: KEYS.admin };

/** `total` requests from one tenant (admissions, or cheap reads), `connections` in flight at a time; the status codes. */
async function burst(h: SecuredHarness, total: number, connections: number, read = false): Promise<number[]> {
  const codes: number[] = [];
  let next = 0;
  const lane = async () => {
    while (next < total) {
      next++;
      const r = read
        ? await h.as(KEYS.acme, { url: '/v1/jobs?limit=1' })
        : await h.as(KEYS.acme, { method: 'POST', url: '/v1/jobs', payload: { graph: 'echo', input: { steps: 1 } } });
      codes.push(r.statusCode);
    }
  };
  await Promise.all(Array.from({ length: connections }, lane));
  return codes;
}

describe('rate limit from the environment', () => {
  let h: SecuredHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('with RATE_LIMIT_PER_SECOND unset, a burst of 500 admissions and 1,500 reads from one tenant meets no 429', async () => {
    h = await startSecuredApp('rate_default', { security: parseSecurityEnv(env).security });
    const admissions = await burst(h, 500, 64);
    expect(admissions).toHaveLength(500);
    expect(new Set(admissions)).toEqual(new Set([202]));
    // Reads are cheap enough that the old default (100/s, burst 200) refused most of these.
    const reads = await burst(h, 1_500, 64, true);
    expect(reads).toHaveLength(1_500);
    expect(new Set(reads)).toEqual(new Set([200]));
  }, 60_000);

  it('with RATE_LIMIT_PER_SECOND set, a tenant past its burst gets 429 rate_limited with Retry-After', async () => {
    h = await startSecuredApp('rate_set', { security: parseSecurityEnv({ ...env, RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '5' }).security });
    const codes = await burst(h, 8, 1);
    expect(codes).toEqual([202, 202, 202, 202, 202, 429, 429, 429]);
    const limited = await h.as(KEYS.acme, { method: 'POST', url: '/v1/jobs', payload: { graph: 'echo', input: {} } });
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(limited.json()).toEqual({ error: { code: 'rate_limited', message: expect.stringContaining('Retry after') } });
  });
});
