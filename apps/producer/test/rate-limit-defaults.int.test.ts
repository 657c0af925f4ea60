import { loadGraphs } from '@runledger/runtime';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app';
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

/** Reads as tenant acme, taking turns among `apps`, until one answers 429 (at most 40): how many passed, the 429, and the time taken. */
async function untilLimited(apps: FastifyInstance[]) {
  const t0 = performance.now();
  for (let i = 0; i < 40; i++) {
    const r = await apps[i % apps.length]!.inject({ url: '/v1/jobs?limit=1', headers: { authorization: `Bearer ${KEYS.acme}` } });
    if (r.statusCode === 429) return { admitted: i, limited: r, seconds: (performance.now() - t0) / 1000 };
    expect(r.statusCode).toBe(200);
  }
  throw new Error('40 requests passed: no rate limit');
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
    const { admitted, limited, seconds } = await untilLimited([h.app]);
    // The burst, plus at most what refilled meanwhile (1/s).
    expect(admitted).toBeGreaterThanOrEqual(5);
    expect(admitted).toBeLessThanOrEqual(5 + Math.ceil(seconds));
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(limited.json()).toEqual({ error: { code: 'rate_limited', message: expect.stringContaining('Retry after') } });
  });

  it('shares one bucket per tenant between producer processes on the same database', async () => {
    const security = parseSecurityEnv({ ...env, RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '4' }).security;
    h = await startSecuredApp('rate_shared', { security });
    // A second producer: its own app, same ledger database.
    const other = buildApp({ ledger: h.ledger, queue: h.queue, graphs: await loadGraphs(), schema: h.db.schema, security });
    try {
      await other.ready();
      const { admitted, seconds } = await untilLimited([h.app, other]);
      // Per process, each would have allowed its own burst of 4 (8 in all) before any 429; shared, the tenant gets 4.
      expect(admitted).toBeGreaterThanOrEqual(4);
      expect(admitted).toBeLessThanOrEqual(4 + Math.ceil(seconds));
      expect(admitted).toBeLessThan(8);
    } finally {
      await other.close();
    }
  });
});
