import { randomUUID } from 'node:crypto';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, type SecuredHarness, startSecuredApp, TWO_TENANTS } from './security-harness';

// Tenant keys, the admin key and tenant isolation over real HTTP handling (inject) and PostgreSQL.

let h: SecuredHarness;
let acmeJob: string;
let acmeParked: string;
let acmeManual: string;

const submit = (key: string | undefined, payload: object, headers: Record<string, string> = {}) =>
  h.as(key, { method: 'POST', url: '/v1/jobs', payload, headers });

beforeAll(async () => {
  h = await startSecuredApp('security_auth', { security: TWO_TENANTS });
  acmeJob = (await submit(KEYS.acme, { graph: 'echo', input: { steps: 1 }, threadId: 'acme-thread-1' })).json().jobId;
  // Jobs in the states every action accepts, so a 404 cannot come from a state check.
  acmeParked = (await submit(KEYS.acme, { graph: 'approval', input: { request: 'x' } })).json().jobId;
  acmeManual = (await submit(KEYS.acme, { graph: 'echo', input: {} })).json().jobId;
  for (const [jobId, park] of [
    [acmeParked, (id: string, t: number) => h.db.ledger.park(id, t, { question: 'ok?' })],
    [acmeManual, (id: string, t: number) => h.db.ledger.requireManual(id, t, 'effect_in_doubt')],
  ] as const) {
    const claim = await h.db.ledger.claim(jobId, 'w1');
    if (!claim.ok) throw new Error('claim failed');
    await park(jobId, claim.job.fencingToken);
  }
});
afterAll(() => h?.close());

describe('authentication', () => {
  it('answers a request without a key with 401 unauthorized and a Bearer challenge', async () => {
    const r = await submit(undefined, { graph: 'echo', input: {} });
    expect(r.statusCode).toBe(401);
    expect(r.headers['www-authenticate']).toBe('Bearer realm="runledger"');
    expect(r.json()).toEqual({ error: { code: 'unauthorized', message: expect.stringContaining('Authorization: Bearer') } });
  });

  it.each([
    ['an unknown key', `Bearer ${KEYS.acme}x`],
    ['a key without the Bearer scheme', KEYS.acme],
    ['Basic credentials', `Basic ${Buffer.from(`acme:${KEYS.acme}`).toString('base64')}`],
    ['an empty Bearer', 'Bearer '],
  ])('answers %s with 401 invalid_token and writes nothing', async (_name, authorization) => {
    const before = (await h.db.ledger.list({ limit: 500 })).jobs.length;
    const r = await h.app.inject({ method: 'POST', url: '/v1/jobs', payload: { graph: 'echo', input: {} }, headers: { authorization } });
    expect(r.statusCode).toBe(401);
    expect(r.headers['www-authenticate']).toContain('error="invalid_token"');
    expect(r.json().error.code).toBe('unauthorized');
    expect((await h.db.ledger.list({ limit: 500 })).jobs.length).toBe(before);
  });

  it('takes a key in X-Api-Key (the LangGraph SDK header) like a Bearer key, and refuses a wrong one', async () => {
    const before = (await h.db.ledger.list({ limit: 500 })).jobs.length;
    const viaHeader = (key: string) => h.app.inject({ method: 'POST', url: '/v1/jobs', payload: { graph: 'echo', input: {} }, headers: { 'x-api-key': key } });
    const admitted = await viaHeader(KEYS.globex);
    expect(admitted.statusCode).toBe(202);
    expect((await h.db.ledger.get(admitted.json().jobId)).tenant).toBe('globex');
    const wrong = await viaHeader(`${KEYS.globex}x`);
    expect(wrong.statusCode).toBe(401);
    expect(wrong.headers['www-authenticate']).toContain('error="invalid_token"');
    expect((await h.db.ledger.list({ limit: 500 })).jobs.length).toBe(before + 1);
    // Authorization wins when both are sent: a wrong Bearer is not rescued by a good X-Api-Key.
    const both = await h.app.inject({ url: '/v1/jobs', headers: { authorization: `Bearer ${KEYS.acme}x`, 'x-api-key': KEYS.acme } });
    expect(both.statusCode).toBe(401);
  });

  it('never takes a key from Proxy-Authorization, a query parameter or a cookie', async () => {
    for (const request of [
      { url: '/v1/jobs', headers: { 'proxy-authorization': `Bearer ${KEYS.acme}` } },
      { url: `/v1/jobs?api_key=${KEYS.acme}` },
      { url: '/v1/jobs', headers: { cookie: `api_key=${KEYS.acme}` } },
    ]) {
      expect((await h.app.inject(request)).statusCode).toBe(401);
    }
  });

  it('serves the health probes and the OpenAPI document without a key', async () => {
    for (const url of ['/healthz', '/openapi.json']) expect((await h.app.inject({ url })).statusCode).toBe(200);
  });

  it('asks for a key on unknown routes too (deny by default), then answers 404', async () => {
    expect((await h.app.inject({ url: '/v1/nothing-here' })).statusCode).toBe(401);
    expect((await h.as(KEYS.acme, { url: '/v1/nothing-here' })).statusCode).toBe(404);
  });

  it('records the admission under the tenant of the key', async () => {
    expect((await h.db.ledger.get(acmeJob)).tenant).toBe('acme');
    const r = await submit(KEYS.globex, { graph: 'echo', input: {} });
    expect(r.statusCode).toBe(202);
    expect((await h.db.ledger.get(r.json().jobId)).tenant).toBe('globex');
  });
});

describe('tenant isolation', () => {
  // Every job route, for a job id: another tenant's must look exactly like a missing one.
  const routes: Array<[string, (jobId: string) => InjectOptions]> = [
    ['GET job', (id) => ({ url: `/v1/jobs/${id}` })],
    ['GET events', (id) => ({ url: `/v1/jobs/${id}/events` })],
    ['POST cancel', (id) => ({ method: 'POST', url: `/v1/jobs/${id}/cancel`, payload: {} })],
    ['POST resume', (id) => ({ method: 'POST', url: `/v1/jobs/${id}/resume`, payload: { resume: { approved: true } } })],
    ['POST replay', (id) => ({ method: 'POST', url: `/v1/jobs/${id}/replay`, payload: {} })],
    ['POST resolve', (id) => ({ method: 'POST', url: `/v1/jobs/${id}/resolve`, payload: { outcome: 'completed', note: 'checked' } })],
  ];
  const jobFor = (name: string) => (name === 'POST resume' ? () => acmeParked : name.startsWith('POST re') ? () => acmeManual : () => acmeJob);

  it.each(routes)("%s of another tenant's job answers 404 exactly like a missing job, and changes nothing", async (name, request) => {
    const jobId = jobFor(name)();
    const before = await h.db.ledger.get(jobId);
    const other = await h.as(KEYS.globex, request(jobId));
    const missingId = randomUUID();
    const missing = await h.as(KEYS.globex, request(missingId));
    expect(other.statusCode).toBe(404);
    expect(missing.statusCode).toBe(404);
    expect(other.json()).toEqual(JSON.parse(missing.body.replaceAll(missingId, jobId)));
    expect(await h.db.ledger.get(jobId)).toEqual(before);
    // The job is there for its owner (read-only check: the actions would change it).
    expect((await h.as(KEYS.acme, { url: `/v1/jobs/${jobId}` })).statusCode).toBe(200);
  });

  it("leaves other tenants' jobs out of the list, even when filtering by their thread", async () => {
    const globexList = (await h.as(KEYS.globex, { url: '/v1/jobs?limit=500' })).json().jobs as Array<{ jobId: string }>;
    expect(globexList.length).toBeGreaterThan(0);
    expect(globexList.map((j) => j.jobId)).not.toContain(acmeJob);
    for (const j of globexList) expect((await h.db.ledger.get(j.jobId)).tenant).toBe('globex');
    expect((await h.as(KEYS.globex, { url: '/v1/jobs?threadId=acme-thread-1' })).json().jobs).toEqual([]);
    expect((await h.as(KEYS.acme, { url: '/v1/jobs?threadId=acme-thread-1' })).json().jobs).toHaveLength(1);
  });

  it("answers 404 for another tenant's thread state, like a thread without jobs", async () => {
    const other = await h.as(KEYS.globex, { url: '/v1/threads/acme-thread-1/state' });
    const missing = await h.as(KEYS.globex, { url: '/v1/threads/no-such-thread/state' });
    expect([other.statusCode, missing.statusCode]).toEqual([404, 404]);
    expect(other.json().error.code).toBe(missing.json().error.code);
    expect((await h.as(KEYS.acme, { url: '/v1/threads/acme-thread-1/state' })).statusCode).toBe(200);
  });

  it("admits another tenant onto a thread id acme uses as a thread of its own, and says nothing about acme's", async () => {
    const r = await submit(KEYS.globex, { graph: 'echo', input: {}, threadId: 'acme-thread-1' });
    expect(r.statusCode).toBe(202);
    expect(r.json().threadId).toBe('acme-thread-1');
    const tenants = (await h.db.ledger.list({ threadId: 'acme-thread-1' })).jobs.map((j) => j.tenant);
    expect(tenants.sort()).toEqual(['acme', 'globex']);
    const acmeOnly = (await h.as(KEYS.acme, { url: '/v1/jobs?threadId=acme-thread-1' })).json().jobs;
    expect(acmeOnly.map((j: { jobId: string }) => j.jobId)).toEqual([acmeJob]);
  });

  it('refuses a thread id starting with "~" (reserved for per-tenant thread ids) with 400, writing nothing', async () => {
    const before = (await h.db.ledger.list({ limit: 500 })).jobs.length;
    const r = await submit(KEYS.acme, { graph: 'echo', input: {}, threadId: '~globex/acme-thread-1' });
    expect(r.statusCode).toBe(400);
    expect(r.json().error).toEqual({ code: 'invalid_request', message: expect.stringContaining('must not start with "~"') });
    expect((await h.db.ledger.list({ limit: 500 })).jobs.length).toBe(before);
  });

  it('keeps idempotency keys per tenant: the same key from two tenants makes two jobs', async () => {
    const body = { graph: 'echo', input: { steps: 1 }, idempotencyKey: 'shared-key' };
    const a = await submit(KEYS.acme, body);
    const b = await submit(KEYS.globex, body);
    expect([a.statusCode, b.statusCode]).toEqual([202, 202]);
    expect(a.json().jobId).not.toBe(b.json().jobId);
  });

  it("lets the admin key read and operate any tenant's job", async () => {
    expect((await h.as(KEYS.admin, { url: `/v1/jobs/${acmeJob}` })).json().jobId).toBe(acmeJob);
    const listed = (await h.as(KEYS.admin, { url: '/v1/jobs?limit=500' })).json().jobs.map((j: { jobId: string }) => j.jobId);
    expect(listed).toContain(acmeJob);
    const victim = (await submit(KEYS.globex, { graph: 'echo', input: {} })).json().jobId;
    const r = await h.as(KEYS.admin, { method: 'POST', url: `/v1/jobs/${victim}/cancel`, payload: { note: 'operator' } });
    expect(r.statusCode).toBe(200);
    expect(r.json().status).toBe('cancelled');
  });
});

describe('fields a client cannot set', () => {
  it.each([
    ['tenant', { tenant: 'globex' }],
    ['status', { status: 'completed' }],
    ['fencingToken', { fencingToken: 99 }],
    ['attempt', { attempt: 5 }],
    ['leaseOwner', { leaseOwner: 'me' }],
    ['result', { result: { forged: true } }],
  ])('POST /v1/jobs with %s answers 400 naming the field and writes nothing', async (field, extra) => {
    const before = (await h.db.ledger.list({ limit: 500 })).jobs.length;
    const r = await submit(KEYS.acme, { graph: 'echo', input: {}, ...extra });
    expect(r.statusCode).toBe(400);
    expect(r.json().error.message).toContain(field);
    expect((await h.db.ledger.list({ limit: 500 })).jobs.length).toBe(before);
  });

  it('refuses status and token fields on actions and a tenant filter on the list', async () => {
    const resume = await h.as(KEYS.acme, { method: 'POST', url: `/v1/jobs/${acmeParked}/resume`, payload: { resume: true, status: 'completed' } });
    expect(resume.statusCode).toBe(400);
    const cancel = await h.as(KEYS.acme, { method: 'POST', url: `/v1/jobs/${acmeJob}/cancel`, payload: { fencingToken: 7 } });
    expect(cancel.statusCode).toBe(400);
    expect((await h.db.ledger.get(acmeParked)).status).toBe('interrupted');
    const list = await h.as(KEYS.globex, { url: '/v1/jobs?tenant=acme' });
    expect(list.statusCode).toBe(400);
    expect(list.json().error.message).toContain('tenant');
  });
});
