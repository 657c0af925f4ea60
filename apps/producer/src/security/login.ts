import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { LOGIN_PATH, LOGOUT_PATH } from './access';
import { appendSetCookie, parseCookies, serializeCookie } from './cookies';
import { csrfField } from './csrf';
import type { KeyRing } from './keys';
import type { TokenBuckets } from './rate-limit';
import { ADMIN_COOKIE_PATH, type AdminSessions, SESSION_COOKIE } from './session';

export interface LoginDeps {
  keys: KeyRing;
  sessions: AdminSessions | undefined;
  failureLimit: TokenBuckets | undefined;
  secureCookies: boolean;
}

const FORM_LIMIT_BYTES = 4_096;

/**
 * Parses `application/x-www-form-urlencoded` bodies into an object of strings (the last of a
 * repeated name wins). Register it in the plugin of the routes that take HTML forms; the rest of
 * the API keeps answering 415 to form bodies.
 */
export function parseFormBody(_request: FastifyRequest, body: string | Buffer, done: (err: Error | null, value?: unknown) => void): void {
  done(null, Object.fromEntries(new URLSearchParams(body.toString())));
}

/** The stylesheet the dashboard uses; public (see access.ts) so this page can load it before sign-in. */
export const DASHBOARD_STYLESHEET = '/admin/static/dashboard.css';

function page(request: FastifyRequest, message?: string, kind: 'error' | 'notice' = 'error'): string {
  const note = message ? `<p class="${kind}" role="alert">${message}</p>` : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in · Runledger</title><link rel="icon" href="data:,"><link rel="stylesheet" href="${DASHBOARD_STYLESHEET}"></head>
<body><header><a class="brand" href="/admin">Runledger</a><nav><a href="/docs">API</a></nav></header>
<main><h1>Sign in to the dashboard</h1>${note}
<form class="action" method="post" action="${LOGIN_PATH}">${csrfField(request)}
<label>Admin key <input type="password" name="key" autocomplete="current-password" required></label>
<p class="muted">The value of <code>RUNLEDGER_ADMIN_KEY</code> in the producer's environment.</p>
<button type="submit">Sign in</button></form></main></body></html>`;
}

const html = (reply: FastifyReply, status: number, body: string) => reply.code(status).type('text/html; charset=utf-8').send(body);

/**
 * GET /admin/login (the form), POST /admin/login (admin key → a signed HttpOnly, SameSite=Strict
 * session cookie for /admin, then 303 to /admin; another key → 401 and the form again) and POST
 * /admin/logout (the session is revoked for every replica, then the cookie cleared). Both POSTs go through the CSRF check like every form under /admin.
 */
export async function loginRoutes(app: FastifyInstance, deps: LoginDeps): Promise<void> {
  const { keys, sessions, failureLimit, secureCookies } = deps;
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_LIMIT_BYTES }, parseFormBody);

  app.get(LOGIN_PATH, { schema: { hide: true } }, async (request, reply) => {
    if (!keys.enabled)
      return html(reply, 200, page(request, 'Authentication is off (RUNLEDGER_API_KEYS and RUNLEDGER_ADMIN_KEY unset): /admin is open.', 'notice'));
    return html(reply, 200, page(request));
  });

  app.post(LOGIN_PATH, { schema: { hide: true } }, async (request, reply) => {
    if (!keys.enabled) return reply.redirect('/admin', 303);
    const key = (request.body as Record<string, unknown> | undefined)?.key;
    if (!sessions || typeof key !== 'string' || !keys.isAdminKey(key)) {
      const take = failureLimit?.take(`ip:${request.ip}`);
      if (take && !take.ok) return html(reply.header('retry-after', String(take.retryAfterSeconds)), 429, page(request, 'Too many attempts; wait and retry.'));
      return html(reply, 401, page(request, sessions ? 'That is not the admin key.' : 'No admin key is configured (RUNLEDGER_ADMIN_KEY).'));
    }
    const cookie = serializeCookie(SESSION_COOKIE, sessions.issue(), {
      path: ADMIN_COOKIE_PATH,
      maxAgeSeconds: sessions.maxAgeSeconds,
      httpOnly: true,
      secure: secureCookies,
    });
    appendSetCookie(reply, cookie);
    return reply.redirect('/admin', 303);
  });

  app.post(LOGOUT_PATH, { schema: { hide: true } }, async (request, reply) => {
    // Ends the session on every replica, not only in this browser: a copy of the cookie stops working too.
    await sessions?.revoke(parseCookies(request.headers.cookie)[SESSION_COOKIE]);
    appendSetCookie(reply, serializeCookie(SESSION_COOKIE, '', { path: ADMIN_COOKIE_PATH, maxAgeSeconds: 0, httpOnly: true, secure: secureCookies }));
    return reply.redirect(LOGIN_PATH, 303);
  });
}
