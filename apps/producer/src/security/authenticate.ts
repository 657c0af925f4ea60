import type { CustomAuth } from '@runledger/runtime';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { accessOf, LOGIN_PATH } from './access';
import { setRequestSecurity } from './context';
import { parseCookies } from './cookies';
import { type AuthContext, customAuthenticate, refusalOf, sendRefusal } from './custom-auth';
import { type Caller, DEFAULT_TENANT, type KeyRing } from './keys';
import { type RateLimiter, type TokenBuckets, tenantBucket } from './rate-limit';
import { type AdminSessions, SESSION_COOKIE } from './session';

export interface AuthDeps {
  keys: KeyRing;
  /** Undefined without an admin key: no browser session can exist. */
  sessions: AdminSessions | undefined;
  /** Per-tenant request budget; undefined = no rate limit. */
  tenantLimit: RateLimiter | undefined;
  /** Budget of failed authentications per client address; undefined = no limit. */
  failureLimit: TokenBuckets | undefined;
  metadataLimitBytes: number;
  /** langgraph.json's `auth.path`: authenticates every LangGraph API request instead of the keys. */
  customAuth?: CustomAuth;
}

const OPEN_CALLER: Caller = { tenant: DEFAULT_TENANT, admin: true, via: 'open' };
const SESSION_CALLER: Caller = { tenant: DEFAULT_TENANT, admin: true, via: 'session' };
const CUSTOM_CALLER: Caller = { tenant: DEFAULT_TENANT, admin: false, via: 'custom' };

/** LangGraph API routes custom auth does not ask about. */
const UNASKED = new Set(['/info', '/internal/truncate']);

/** Runledger's own API (/v1): its keys keep governing it when custom auth takes the LangGraph API. */
const isOwnApi = (path: string) => path === '/v1' || path.startsWith('/v1/');

/**
 * The key a request presents: `Authorization: Bearer <key>`, or else `X-Api-Key: <key>` (the header
 * the LangGraph SDK sends). '' for another Authorization scheme or an empty X-Api-Key; undefined
 * without either header.
 */
function presentedKey(headers: FastifyRequest['headers']): string | undefined {
  const { authorization } = headers;
  if (authorization !== undefined) return /^Bearer[ ]+(\S+)\s*$/i.exec(authorization)?.[1] ?? '';
  const apiKey = headers['x-api-key'];
  return apiKey === undefined ? undefined : typeof apiKey === 'string' ? apiKey.trim() : '';
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
  const message = presented ? 'The API key is not valid.' : 'Send an API key as Authorization: Bearer <key> (or X-Api-Key: <key>).';
  return reply
    .code(401)
    .header('www-authenticate', challenge)
    .send({ error: { code: 'unauthorized', message } });
}

/**
 * onRequest: establishes the caller of every non-public route. Open mode (no keys): everyone is
 * the operator. Otherwise a Bearer or X-Api-Key key (tenant or admin) or, on admin routes, an
 * admin session cookie that was not logged out. Missing or wrong credentials → 401 with
 * WWW-Authenticate (a browser asking for an admin page is sent to the login form instead); a
 * tenant key on an admin route → 403 forbidden; over the tenant's rate → 429 with Retry-After.
 */
export function authenticate(deps: AuthDeps) {
  const { keys, sessions, tenantLimit, failureLimit, metadataLimitBytes, customAuth } = deps;
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    const path = request.url.split('?')[0] ?? '';
    const access = accessOf(request.routeOptions.url, path);
    if (access === 'public') return undefined;
    let caller: Caller | undefined;
    let presented = false;
    let authUser: AuthContext | undefined;
    if (customAuth && access === 'tenant' && !isOwnApi(request.routeOptions.url ?? path)) {
      // The LangGraph API under custom auth: the project's handler decides (as on LangGraph's server, /info is not asked,
      // nor the test hook /internal/truncate, registered only with RUNLEDGER_TEST_HOOKS=1, that LangGraph's tests call unauthenticated).
      if (!UNASKED.has(request.routeOptions.url ?? '')) {
        try {
          authUser = await customAuthenticate(customAuth, request);
        } catch (err) {
          const refusal = refusalOf(err, 'authenticate');
          const take = refusal.status === 401 || refusal.status === 403 ? failureLimit?.take(`ip:${request.ip}`) : undefined;
          if (take && !take.ok) return tooMany(reply, take.retryAfterSeconds, 'Too many failed authentications from this address.');
          return sendRefusal(reply, refusal);
        }
      }
      caller = CUSTOM_CALLER;
    } else if (customAuth && !keys.enabled) {
      // Never open: with auth.path and no keys, /v1 and the admin routes are closed.
      return reply.code(401).send({
        error: { code: 'unauthorized', message: 'With auth.path in langgraph.json, /v1 and the admin routes need RUNLEDGER_API_KEYS or RUNLEDGER_ADMIN_KEY.' },
      });
    } else if (!keys.enabled) caller = OPEN_CALLER;
    else {
      const key = presentedKey(request.headers);
      presented = key !== undefined;
      if (key) caller = keys.identify(key);
      else if (key === undefined && access === 'admin' && (await sessions?.isActive(parseCookies(request.headers.cookie)[SESSION_COOKIE])))
        caller = SESSION_CALLER;
    }
    if (!caller) {
      const take = failureLimit?.take(`ip:${request.ip}`);
      if (take && !take.ok) return tooMany(reply, take.retryAfterSeconds, 'Too many failed authentications from this address.');
      if (access === 'admin' && !presented && wantsHtml(request)) return reply.redirect(LOGIN_PATH, 303);
      return unauthorized(reply, presented);
    }
    const take = await Promise.resolve(tenantLimit?.take(caller.admin ? 'admin' : tenantBucket(caller.tenant))).catch((err: Error) => {
      // A limiter that cannot answer (PostgreSQL down) does not refuse: the route answers for itself.
      request.log.warn({ err: err.message }, 'rate limit not checked');
      return undefined;
    });
    if (take && !take.ok) return tooMany(reply, take.retryAfterSeconds, 'Too many requests for this tenant (RATE_LIMIT_PER_SECOND).');
    if (access === 'admin' && !caller.admin) {
      return reply.code(403).send({ error: { code: 'forbidden', message: 'This route needs the admin key; a tenant key cannot use it.' } });
    }
    setRequestSecurity(request, { caller, authEnabled: keys.enabled || customAuth !== undefined, metadataLimitBytes, authUser });
    return undefined;
  };
}
