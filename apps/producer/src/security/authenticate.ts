import type { FastifyReply, FastifyRequest } from 'fastify';
import { accessOf, LOGIN_PATH } from './access';
import { setRequestSecurity } from './context';
import { parseCookies } from './cookies';
import { type Caller, DEFAULT_TENANT, type KeyRing } from './keys';
import type { TokenBuckets } from './rate-limit';
import { type AdminSessions, SESSION_COOKIE } from './session';

export interface AuthDeps {
  keys: KeyRing;
  /** Undefined without an admin key: no browser session can exist. */
  sessions: AdminSessions | undefined;
  /** Per-tenant request budget; undefined = no rate limit. */
  tenantLimit: TokenBuckets | undefined;
  /** Budget of failed authentications per client address; undefined = no limit. */
  failureLimit: TokenBuckets | undefined;
  metadataLimitBytes: number;
}

const OPEN_CALLER: Caller = { tenant: DEFAULT_TENANT, admin: true, via: 'open' };
const SESSION_CALLER: Caller = { tenant: DEFAULT_TENANT, admin: true, via: 'session' };

/** The key of `Authorization: Bearer <key>`; '' for any other Authorization header; undefined without one. */
function bearerKey(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? '';
}

/** The key of an `x-api-key` header (how the LangGraph SDK sends it); '' when repeated or blank; undefined without one. */
function apiKeyHeader(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  return typeof header === 'string' ? header.trim() : '';
}

const wantsHtml = (request: FastifyRequest) => request.method === 'GET' && (request.headers.accept ?? '').includes('text/html');

function tooMany(reply: FastifyReply, retryAfterSeconds: number, message: string) {
  return reply
    .code(429)
    .header('retry-after', String(retryAfterSeconds))
    .send({ error: { code: 'rate_limited', message: `${message} Retry after ${retryAfterSeconds} s.` } });
}

function unauthorized(reply: FastifyReply, presented: boolean) {
  const challenge = presented ? 'Bearer realm="runledger", error="invalid_token"' : 'Bearer realm="runledger"';
  const message = presented ? 'The API key is not valid.' : 'Send an API key as Authorization: Bearer <key>.';
  return reply
    .code(401)
    .header('www-authenticate', challenge)
    .send({ error: { code: 'unauthorized', message } });
}

/**
 * onRequest: establishes the caller of every non-public route. Open mode (no keys): everyone is
 * the operator. Otherwise a Bearer key (tenant or admin) or, on admin routes, the admin session
 * cookie. `x-api-key: <key>` counts like the Bearer header when no Authorization header is sent. Missing or wrong credentials → 401 with WWW-Authenticate (a browser asking for an admin
 * page is sent to the login form instead); a tenant key on an admin route → 403 forbidden; over
 * the tenant's rate → 429 with Retry-After.
 */
export function authenticate(deps: AuthDeps) {
  const { keys, sessions, tenantLimit, failureLimit, metadataLimitBytes } = deps;
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    const access = accessOf(request.routeOptions.url, request.url.split('?')[0] ?? '');
    if (access === 'public') return undefined;
    let caller: Caller | undefined;
    let presented = false;
    if (!keys.enabled) caller = OPEN_CALLER;
    else {
      const key = bearerKey(request.headers.authorization) ?? apiKeyHeader(request.headers['x-api-key']);
      presented = key !== undefined;
      if (key) caller = keys.identify(key);
      else if (key === undefined && access === 'admin' && sessions?.verify(parseCookies(request.headers.cookie)[SESSION_COOKIE])) caller = SESSION_CALLER;
    }
    if (!caller) {
      const take = failureLimit?.take(`ip:${request.ip}`);
      if (take && !take.ok) return tooMany(reply, take.retryAfterSeconds, 'Too many failed authentications from this address.');
      if (access === 'admin' && !presented && wantsHtml(request)) return reply.redirect(LOGIN_PATH, 303);
      return unauthorized(reply, presented);
    }
    const take = tenantLimit?.take(caller.admin ? 'admin' : `tenant:${caller.tenant}`);
    if (take && !take.ok) return tooMany(reply, take.retryAfterSeconds, 'Too many requests for this tenant (RATE_LIMIT_PER_SECOND).');
    if (access === 'admin' && !caller.admin) {
      return reply.code(403).send({ error: { code: 'forbidden', message: 'This route needs the admin key; a tenant key cannot use it.' } });
    }
    setRequestSecurity(request, { caller, authEnabled: keys.enabled, metadataLimitBytes });
    return undefined;
  };
}
