import { loadGraphs } from '@runledger/runtime';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app';
import { CONTENT_SECURITY_POLICY, csrfField, parseFormBody } from '../src/security';
import { csrfFieldValue, KEYS, type SecuredHarness, setCookies, startSecuredApp, TWO_TENANTS } from './security-harness';

// The admin key, the browser login with its session cookie, CSRF under /admin and the security
// headers. A stand-in form under /admin plays the dashboard, so this holds with or without it.

let h: SecuredHarness;
const posted: unknown[] = [];

function standInDashboard(app: FastifyInstance): void {
  void app.register(async (scope) => {
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, parseFormBody);
    scope.get('/admin/test-form', async (request, reply) =>
      reply.type('text/html').send(`<form method="post" action="/admin/test-form">${csrfField(request)}<input name="note"></form>`),
    );
    scope.post('/admin/test-form', async (request) => {
      posted.push(request.body);
      return { ok: true };
    });
  });
}

beforeAll(async () => {
  h = await startSecuredApp('security_admin', { security: TWO_TENANTS, extraRoutes: standInDashboard });
});
afterAll(() => h?.close());

/** GET the login form: its CSRF cookie and hidden field. */
async function loginForm() {
  const page = await h.app.inject({ url: '/admin/login' });
  expect(page.statusCode).toBe(200);
  const cookie = setCookies(page).find((c) => c.name === 'rl_csrf');
  const field = csrfFieldValue(page.body);
  expect(cookie?.value).toBeTruthy();
  expect(field).toBe(cookie?.value);
  return { csrf: cookie?.value as string };
}

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const FORM = 'application/x-www-form-urlencoded';

/** Signs in through the form; returns the session cookie and the CSRF token. */
async function signIn() {
  const { csrf } = await loginForm();
  const r = await h.app.inject({
    method: 'POST',
    url: '/admin/login',
    payload: form({ key: KEYS.admin, _csrf: csrf }),
    headers: { 'content-type': FORM, cookie: `rl_csrf=${csrf}` },
  });
  expect(r.statusCode).toBe(303);
  expect(r.headers.location).toBe('/admin');
  const session = setCookies(r).find((c) => c.name === 'rl_admin');
  if (!session) throw new Error('no session cookie');
  return { session, csrf };
}

describe('admin routes', () => {
  const adminUrls = ['/admin', '/admin/queues', '/admin/queues/api/queues', '/metrics'];

  it.each(adminUrls)('%s answers 401 without a key and 403 forbidden with a tenant key', async (url) => {
    const none = await h.app.inject({ url });
    expect(none.statusCode).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Bearer realm="runledger"');
    const tenant = await h.as(KEYS.acme, { url });
    expect(tenant.statusCode).toBe(403);
    expect(tenant.json().error.code).toBe('forbidden');
  });

  it('opens Bull Board with the admin key', async () => {
    expect((await h.as(KEYS.admin, { url: '/admin/queues' })).statusCode).toBe(200);
    const api = await h.as(KEYS.admin, { url: '/admin/queues/api/queues' });
    expect(api.statusCode).toBe(200);
    expect(api.json().queues).toHaveLength(1);
  });

  it('sends a browser without a session to the login form', async () => {
    const r = await h.app.inject({ url: '/admin/queues', headers: { accept: 'text/html,application/xhtml+xml' } });
    expect(r.statusCode).toBe(303);
    expect(r.headers.location).toBe('/admin/login');
  });

  it('GET / needs no key: a browser goes to /admin (which asks for the key), an API client to /docs', async () => {
    const browser = await h.app.inject({ url: '/', headers: { accept: 'text/html,application/xhtml+xml' } });
    expect(browser.statusCode).toBe(302);
    expect(browser.headers.location).toBe('/admin');
    const api = await h.app.inject({ url: '/', headers: { accept: 'application/json' } });
    expect(api.statusCode).toBe(302);
    expect(api.headers.location).toBe('/docs');
  });

  it('denies /admin to every key when no admin key is configured, and sends a browser at / to /docs', async () => {
    const tenantsOnly = await startSecuredApp('security_no_admin', { security: { apiKeys: TWO_TENANTS.apiKeys } });
    try {
      expect((await tenantsOnly.as(KEYS.acme, { url: '/admin/queues' })).statusCode).toBe(403);
      expect((await tenantsOnly.as(KEYS.admin, { url: '/admin/queues' })).statusCode).toBe(401);
      const browser = await tenantsOnly.app.inject({ url: '/', headers: { accept: 'text/html' } });
      expect(browser.statusCode).toBe(302);
      expect(browser.headers.location).toBe('/docs');
    } finally {
      await tenantsOnly.close();
    }
  });
});

describe('browser login', () => {
  it("names RUNLEDGER_ADMIN_KEY on the form and wears the dashboard's stylesheet, which loads without a session", async () => {
    const page = await h.app.inject({ url: '/admin/login' });
    expect(page.body).toContain('<code>RUNLEDGER_ADMIN_KEY</code>');
    const href = /<link rel="stylesheet" href="([^"]+)">/.exec(page.body)?.[1];
    expect(href).toBe('/admin/static/dashboard.css');
    const css = await h.app.inject({ url: href as string });
    expect(css.statusCode).toBe(200);
    expect(css.headers['content-type']).toContain('text/css');
    expect(css.body).toContain('.action');
    // Only the dashboard's static files are public; the pages around them are not.
    expect((await h.app.inject({ url: '/admin/static-ish' })).statusCode).toBe(401);
  });

  it('sets an HttpOnly, SameSite=Strict, expiring session cookie for the admin key, which opens Bull Board', async () => {
    const { session } = await signIn();
    expect(session.header).toMatch(/; HttpOnly/);
    expect(session.header).toMatch(/; SameSite=Strict/);
    expect(session.header).toMatch(/; Path=\/admin/);
    expect(session.header).toMatch(/; Max-Age=28800/);
    expect(session.value).not.toContain(KEYS.admin);
    const r = await h.app.inject({ url: '/admin/queues', headers: { cookie: `rl_admin=${encodeURIComponent(session.value)}` } });
    expect(r.statusCode).toBe(200);
  });

  it('refuses a forged or altered session cookie, and the cookie outside admin routes', async () => {
    const { session } = await signIn();
    const altered = `${session.value.slice(0, -2)}${session.value.endsWith('A') ? 'B' : 'A'}A`;
    for (const value of [altered, 'v1-99999999999999-x.sig', '']) {
      expect((await h.app.inject({ url: '/admin/queues', headers: { cookie: `rl_admin=${encodeURIComponent(value)}` } })).statusCode).toBe(401);
    }
    expect((await h.app.inject({ url: '/v1/jobs', headers: { cookie: `rl_admin=${encodeURIComponent(session.value)}` } })).statusCode).toBe(401);
  });

  it('answers a wrong key or a tenant key with 401 and no session', async () => {
    const { csrf } = await loginForm();
    for (const key of ['not-the-key', KEYS.acme]) {
      const r = await h.app.inject({
        method: 'POST',
        url: '/admin/login',
        payload: form({ key, _csrf: csrf }),
        headers: { 'content-type': FORM, cookie: `rl_csrf=${csrf}` },
      });
      expect(r.statusCode).toBe(401);
      expect(setCookies(r).some((c) => c.name === 'rl_admin')).toBe(false);
    }
  });

  it('clears the session on logout', async () => {
    const { csrf } = await loginForm();
    const r = await h.app.inject({
      method: 'POST',
      url: '/admin/logout',
      payload: form({ _csrf: csrf }),
      headers: { 'content-type': FORM, cookie: `rl_csrf=${csrf}` },
    });
    expect(r.statusCode).toBe(303);
    expect(setCookies(r).find((c) => c.name === 'rl_admin')?.header).toMatch(/Max-Age=0/);
  });

  it('ends the session on the server: the logged-out cookie is refused here and by another producer on the same database', async () => {
    const { session, csrf } = await signIn();
    const other = buildApp({ ledger: h.ledger, queue: h.queue, graphs: await loadGraphs(), schema: h.db.schema, security: TWO_TENANTS });
    try {
      const board = (app: FastifyInstance, value: string) => app.inject({ url: '/admin/queues', headers: { cookie: `rl_admin=${encodeURIComponent(value)}` } });
      const kept = await signIn();
      expect([(await board(h.app, session.value)).statusCode, (await board(other, session.value)).statusCode]).toEqual([200, 200]);
      const out = await h.app.inject({
        method: 'POST',
        url: '/admin/logout',
        payload: form({ _csrf: csrf }),
        headers: { 'content-type': FORM, cookie: `rl_csrf=${csrf}; rl_admin=${encodeURIComponent(session.value)}` },
      });
      expect(out.statusCode).toBe(303);
      expect([(await board(h.app, session.value)).statusCode, (await board(other, session.value)).statusCode]).toEqual([401, 401]);
      // A browser is sent to the login form again; another session of the admin stays open.
      const page = await h.app.inject({ url: '/admin/queues', headers: { accept: 'text/html', cookie: `rl_admin=${encodeURIComponent(session.value)}` } });
      expect([page.statusCode, page.headers.location]).toEqual([303, '/admin/login']);
      expect((await board(other, kept.session.value)).statusCode).toBe(200);
    } finally {
      await other.close();
    }
  });
});

describe('CSRF under /admin', () => {
  it('rejects the login form without its token, or with a token that does not match the cookie', async () => {
    const { csrf } = await loginForm();
    const attempts = [
      { payload: form({ key: KEYS.admin }), cookie: `rl_csrf=${csrf}` },
      { payload: form({ key: KEYS.admin, _csrf: csrf }), cookie: '' },
      { payload: form({ key: KEYS.admin, _csrf: `${csrf}x` }), cookie: `rl_csrf=${csrf}` },
      { payload: form({ key: KEYS.admin, _csrf: 'made.up' }), cookie: 'rl_csrf=made.up' },
    ];
    for (const a of attempts) {
      const r = await h.app.inject({ method: 'POST', url: '/admin/login', payload: a.payload, headers: { 'content-type': FORM, cookie: a.cookie } });
      expect(r.statusCode).toBe(403);
      expect(r.json().error.code).toBe('csrf_failed');
      expect(setCookies(r).some((c) => c.name === 'rl_admin')).toBe(false);
    }
  });

  it("protects a dashboard form: 403 without the token, accepted with csrfField's value, which never reaches the handler", async () => {
    const { session } = await signIn();
    const page = await h.app.inject({ url: '/admin/test-form', headers: { cookie: `rl_admin=${encodeURIComponent(session.value)}` } });
    expect(page.statusCode).toBe(200);
    const token = csrfFieldValue(page.body) as string;
    const cookie = `rl_admin=${encodeURIComponent(session.value)}; rl_csrf=${encodeURIComponent(token)}`;
    const post = (payload: string, extra: Record<string, string> = {}) =>
      h.app.inject({ method: 'POST', url: '/admin/test-form', payload, headers: { 'content-type': FORM, cookie, ...extra } });
    expect((await post(form({ note: 'a' }))).statusCode).toBe(403);
    expect((await post(form({ note: 'b', _csrf: token }))).json()).toEqual({ ok: true });
    expect((await post(form({ note: 'c' }), { 'x-csrf-token': token })).json()).toEqual({ ok: true });
    expect(posted).toEqual([{ note: 'b' }, { note: 'c' }]);
  });

  it("refuses Bull Board's writes from another site, allows them from its own pages", async () => {
    const { session } = await signIn();
    const cookie = `rl_admin=${encodeURIComponent(session.value)}`;
    const put = (headers: Record<string, string>) => h.app.inject({ method: 'PUT', url: '/admin/queues/api/queues/resume', headers: { cookie, ...headers } });
    expect((await put({ origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' })).statusCode).toBe(403);
    expect((await put({})).statusCode).toBe(403);
    expect((await put({ 'sec-fetch-site': 'same-origin' })).statusCode).toBe(200);
  });

  it('does not ask API clients that send a key for a token', async () => {
    const r = await h.as(KEYS.admin, { method: 'PUT', url: '/admin/queues/api/queues/resume' });
    expect(r.statusCode).toBe(200);
  });
});

describe('security headers', () => {
  it.each([
    ['an API answer', { url: '/healthz' }],
    ['a 401', { url: '/v1/jobs' }],
    ['Bull Board', { url: '/admin/queues', headers: { authorization: `Bearer ${KEYS.admin}` } }],
    ['the login page', { url: '/admin/login' }],
    ['the API docs', { url: '/docs' }],
  ])('are on %s', async (_name, request) => {
    const r = await h.app.inject(request);
    expect(r.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
    expect(CONTENT_SECURITY_POLICY).toContain("default-src 'self'");
    expect(CONTENT_SECURITY_POLICY).toContain("frame-ancestors 'none'");
    expect(r.headers['x-frame-options']).toBe('DENY');
    expect(r.headers['x-content-type-options']).toBe('nosniff');
    expect(r.headers['referrer-policy']).toBe('no-referrer');
  });
});
