import type { CustomAuth } from '@runledger/runtime';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** The user a custom `authenticate` returned, normalised as LangGraph's server does. */
export interface AuthUser {
  identity: string;
  permissions: string[];
  display_name: string;
  is_authenticated: boolean;
  [key: string]: unknown;
}

/** What a request's custom authentication established: the user and its permissions (scopes). */
export interface AuthContext {
  user: AuthUser;
  scopes: string[];
}

/** An error a handler threw or returned, as the status and headers it answers with. */
export class AuthRefused extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'AuthRefused';
  }
}

const CODES: Record<number, string> = { 400: 'invalid_request', 401: 'unauthorized', 403: 'forbidden', 404: 'not_found', 409: 'conflict', 429: 'rate_limited' };

/**
 * `HTTPException` of `@langchain/langgraph-sdk/auth` (duck-typed, as LangGraph's server checks
 * it: `status` and `headers`) → its status; any other throw → 500, its message not shown.
 */
export function refusalOf(err: unknown, where: string): AuthRefused {
  if (typeof err === 'object' && err !== null && 'status' in err && 'headers' in err) {
    const e = err as { status: unknown; message?: unknown; headers: unknown };
    const status = typeof e.status === 'number' && e.status >= 400 && e.status <= 599 ? e.status : 500;
    const headers = (e.headers ?? {}) as Record<string, string>;
    return new AuthRefused(status, typeof e.message === 'string' && e.message ? e.message : status === 401 ? 'Unauthorized' : 'Forbidden', headers);
  }
  if (err instanceof AuthRefused) return err;
  return new AuthRefused(500, `The custom auth ${where} handler failed (see the producer's log).`);
}

/** Answers a refusal in the house shape `{ error: { code, message } }`, with the handler's headers. */
export function sendRefusal(reply: FastifyReply, refusal: AuthRefused): FastifyReply {
  for (const [name, value] of Object.entries(refusal.headers)) if (typeof value === 'string') reply.header(name, value);
  const code = CODES[refusal.status] ?? (refusal.status >= 500 ? 'auth_handler_failed' : 'auth_refused');
  return reply.code(refusal.status).send({ error: { code, message: refusal.message } });
}

/** The request as the Fetch API's Request (what `authenticate` receives): method, URL and headers; no body. */
function webRequest(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else if (value !== undefined) headers.set(name, value);
  }
  return new Request(`${request.protocol}://${request.host || 'localhost'}${request.url}`, { method: request.method, headers });
}

/**
 * Runs the project's `authenticate` on a request. A string is the identity; an object needs a
 * string `identity`; anything else, or a throw, is refused (AuthRefused: its status, else 500).
 */
export async function customAuthenticate(auth: CustomAuth, request: FastifyRequest): Promise<AuthContext> {
  const authenticate = auth['~handlerCache'].authenticate;
  if (!authenticate) throw new AuthRefused(500, 'The custom auth has no authenticate handler.');
  let response: unknown;
  try {
    response = await authenticate(webRequest(request));
  } catch (err) {
    const refusal = refusalOf(err, 'authenticate');
    if (refusal.status >= 500) request.log.error({ err }, 'custom auth: authenticate threw');
    throw refusal;
  }
  if (typeof response === 'string' && response) {
    return { scopes: [], user: { identity: response, display_name: response, permissions: [], is_authenticated: true } };
  }
  if (typeof response === 'object' && response !== null && typeof (response as { identity?: unknown }).identity === 'string') {
    const r = response as Record<string, unknown> & { identity: string };
    const scopes = Array.isArray(r.permissions) ? r.permissions.filter((p): p is string => typeof p === 'string') : [];
    const user: AuthUser = {
      ...r,
      permissions: scopes,
      is_authenticated: typeof r.is_authenticated === 'boolean' ? r.is_authenticated : true,
      display_name: typeof r.display_name === 'string' ? r.display_name : r.identity,
    };
    return { scopes, user };
  }
  request.log.error('custom auth: authenticate returned neither a string nor an object with a string identity');
  throw new AuthRefused(500, 'The custom auth authenticate handler returned neither a string nor an object with a string `identity`.');
}
