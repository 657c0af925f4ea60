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

function page(request: FastifyRequest, message?: string): string {
  const note = message ? `<p role="alert">${message}</p>` : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Runledger admin sign-in</title></head>
<body><main><h1>Runledger admin</h1>${note}
<form method="post" action="${LOGIN_PATH}">${csrfField(request)}
<label>Admin key <input type="password" name="key" autocomplete="current-password" required></label>
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
    if (!keys.enabled) return html(reply, 200, page(request, 'Authentication is off (RUNLEDGER_API_KEYS and RUNLEDGER_ADMIN_KEY unset): /admin is open.'));
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
