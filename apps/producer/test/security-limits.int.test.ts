import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, type SecuredHarness, startSecuredApp, TWO_TENANTS } from './security-harness';

// Request budgets: the per-tenant rate limit, body and field sizes, and the server's timeouts.

describe('per-tenant rate limit', () => {
  let h: SecuredHarness;
  beforeAll(async () => {
    h = await startSecuredApp('security_rate', { security: { ...TWO_TENANTS, rateLimit: { perSecond: 0.2, burst: 3 } } });
  });
  afterAll(() => h?.close());

  it('answers 429 rate_limited with Retry-After once a tenant spends its burst, and not other tenants', async () => {
    const list = (key: string) => h.as(key, { url: '/v1/jobs' });
    const answers = [await list(KEYS.acme), await list(KEYS.acme), await list(KEYS.acme), await list(KEYS.acme)];
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200, 429]);
    const limited = answers[3]!;
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(limited.json().error.code).toBe('rate_limited');
    expect((await list(KEYS.globex)).statusCode).toBe(200);
  });

  it('limits failed authentications per client address too', async () => {
    const codes: number[] = [];
    for (let i = 0; i < 5; i++) codes.push((await h.as('wrong-key-for-rate-test', { url: '/v1/jobs' })).statusCode);
    expect(codes.slice(0, 3)).toEqual([401, 401, 401]);
    expect(codes.slice(3)).toEqual([429, 429]);
  });

  it('keeps health probes out of the budget', async () => {
    for (let i = 0; i < 10; i++) expect((await h.app.inject({ url: '/healthz' })).statusCode).toBe(200);
  });
});

describe('body and field sizes', () => {
  const LIMIT = 8_192;
  let h: SecuredHarness;
  beforeAll(async () => {
    h = await startSecuredApp('security_sizes', { security: { ...TWO_TENANTS, metadataLimitBytes: 1_024 }, bodyLimitBytes: LIMIT });
  });
  afterAll(() => h?.close());

  const submit = (payload: object, headers: Record<string, string> = {}) => h.as(KEYS.acme, { method: 'POST', url: '/v1/jobs', payload, headers });
  const jobs = async () => (await h.db.ledger.list({ limit: 500 })).jobs.length;

  it('answers a body over the limit with 413 payload_too_large', async () => {
    const before = await jobs();
    const r = await submit({ graph: 'approval', input: { request: 'x'.repeat(LIMIT) } });
    expect(r.statusCode).toBe(413);
    expect(r.json().error.code).toBe('payload_too_large');
    expect(await jobs()).toBe(before);
  });

  it.each([
    ['graph', { graph: 'g'.repeat(201), input: {} }, {}],
    ['threadId', { graph: 'echo', input: {}, threadId: 't'.repeat(201) }, {}],
    ['idempotencyKey', { graph: 'echo', input: {}, idempotencyKey: 'k'.repeat(201) }, {}],
    ['Idempotency-Key header', { graph: 'echo', input: {} }, { 'idempotency-key': 'k'.repeat(201) }],
    ['metadata', { graph: 'echo', input: {}, metadata: { note: 'm'.repeat(1_100) } }, {}],
  ])('answers an oversized %s with 400 invalid_request naming it, and writes nothing', async (field, payload, headers) => {
    const before = await jobs();
    const r = await submit(payload, headers);
    expect(r.statusCode).toBe(400);
    expect(r.json().error.code).toBe('invalid_request');
    expect(r.json().error.message).toContain(field);
    expect(await jobs()).toBe(before);
  });

  it('accepts fields at their limits', async () => {
    const r = await submit({ graph: 'echo', input: {}, threadId: 't'.repeat(200), idempotencyKey: 'k'.repeat(200), metadata: { note: 'm'.repeat(900) } });
    expect(r.statusCode).toBe(202);
  });
});

describe('timeouts', () => {
  let h: SecuredHarness;
  let port: number;
  beforeAll(async () => {
    h = await startSecuredApp('security_timeouts', { security: { ...TWO_TENANTS, requestTimeoutMs: 60_000, connectionTimeoutMs: 500 } });
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    port = (h.app.server.address() as { port: number }).port;
  });
  afterAll(() => h?.close());

  it('sets the request and connection timeouts on the HTTP server', () => {
    expect(h.app.server.requestTimeout).toBe(60_000);
    expect(h.app.server.timeout).toBe(500);
  });

  // The bounds tell the connection timeout (500 ms) from the request timeout (60 s) with room
  // for a loaded machine: under CI load (two cores, load ~25) the close came after 8.5 s once.
  it('closes a connection that stays idle past the connection timeout', async () => {
    const started = Date.now();
    const closedAfter = await new Promise<number>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      // Half a request, then silence: a slow client holding a connection.
      socket.on('connect', () => socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n'));
      socket.on('close', () => resolve(Date.now() - started));
      socket.on('error', reject);
      setTimeout(() => reject(new Error('the server kept an idle connection for 30 s')), 30_000).unref();
    });
    expect(closedAfter).toBeGreaterThanOrEqual(400);
    expect(closedAfter).toBeLessThan(30_000);
  });
});
