import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { BULL_BOARD_PATH } from '../bull-board';
import { appendSetCookie, parseCookies, type Signer, safeEqual, serializeCookie } from './cookies';
import { ADMIN_COOKIE_PATH } from './session';

/** The double-submit cookie. */
export const CSRF_COOKIE = 'rl_csrf';
/** The hidden form field carrying the token. */
export const CSRF_FIELD = '_csrf';
/** The header carrying the token (for fetch calls). */
export const CSRF_HEADER = 'x-csrf-token';

const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const TOKEN_MAX_AGE_SECONDS = 24 * 60 * 60;

interface CsrfState {
  signer: Signer;
  secure: boolean;
  /** The valid token of the request's cookie, if it had one. */
  fromCookie: string | undefined;
  /** A token minted for this response; set as the cookie in onSend. */
  minted?: string;
}

const states = new WeakMap<FastifyRequest, CsrfState>();

/** True for /admin and everything under it. */
export const isAdminPath = (path: string) => path === '/admin' || path.startsWith('/admin/');

const pathOf = (request: FastifyRequest) => request.routeOptions.url ?? request.url.split('?')[0] ?? '';

/**
 * The CSRF token for a page under /admin: the one of the request's cookie, or a new one that the
 * response sets as the cookie. Throws outside /admin, where no token is issued.
 */
export function csrfToken(request: FastifyRequest): string {
  const state = states.get(request);
  if (!state) throw new Error(`csrfToken: ${request.url} is not under /admin, where CSRF tokens are issued.`);
  if (state.fromCookie) return state.fromCookie;
  state.minted ??= state.signer.sign(randomBytes(18).toString('base64url'));
  return state.minted;
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** `<input type="hidden" name="_csrf" value="…">` for a form that POSTs under /admin. Throws like csrfToken. */
export function csrfField(request: FastifyRequest): string {
  return `<input type="hidden" name="${CSRF_FIELD}" value="${escapeHtml(csrfToken(request))}">`;
}

/** onRequest: remembers the request's CSRF cookie under /admin, so pages can render csrfField. */
export function csrfContext(signer: Signer, secure: boolean) {
  return async (request: FastifyRequest): Promise<void> => {
    if (!isAdminPath(pathOf(request))) return;
    const cookie = parseCookies(request.headers.cookie)[CSRF_COOKIE];
    states.set(request, { signer, secure, fromCookie: signer.verify(cookie) ? cookie : undefined });
  };
}

/** onSend: sets the cookie of a token minted while answering. */
export async function csrfCookie(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const minted = states.get(request)?.minted;
  if (!minted) return;
  const secure = states.get(request)?.secure ?? false;
  appendSetCookie(reply, serializeCookie(CSRF_COOKIE, minted, { path: ADMIN_COOKIE_PATH, maxAgeSeconds: TOKEN_MAX_AGE_SECONDS, httpOnly: true, secure }));
}

/** Bull Board's UI cannot send our token: its writes must come from a page of this origin instead. */
function sameOrigin(request: FastifyRequest): boolean {
  const site = request.headers['sec-fetch-site'];
  if (typeof site === 'string') return site === 'same-origin';
  const origin = request.headers.origin;
  if (typeof origin !== 'string') return false;
  try {
    return new URL(origin).host === request.headers.host;
  } catch {
    return false;
  }
}

const reject = (reply: FastifyReply, message: string) => reply.code(403).send({ error: { code: 'csrf_failed', message } });

/**
 * preValidation: a POST/PUT/PATCH/DELETE under /admin sent with ambient browser credentials (no
 * Authorization or X-Api-Key header) must carry the token of its CSRF cookie in the `_csrf` field or the
 * X-CSRF-Token header; else 403 csrf_failed. The field is removed before the body is validated.
 * Bull Board's API (under /admin/queues) is checked for a same-origin request instead.
 */
export async function csrfCheck(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
  const path = pathOf(request);
  if (!UNSAFE_METHODS.has(request.method) || !isAdminPath(path)) return undefined;
  // A browser never attaches an Authorization or X-Api-Key header to a cross-site request on its own.
  if (request.headers.authorization || request.headers['x-api-key']) return undefined;
  if (path === BULL_BOARD_PATH || path.startsWith(`${BULL_BOARD_PATH}/`)) {
    return sameOrigin(request) ? undefined : reject(reply, 'Bull Board changes must come from a page of this origin.');
  }
  const body = request.body as Record<string, unknown> | undefined;
  const fromBody = body && typeof body === 'object' ? body[CSRF_FIELD] : undefined;
  const header = request.headers[CSRF_HEADER];
  const presented = typeof header === 'string' ? header : typeof fromBody === 'string' ? fromBody : undefined;
  const cookie = states.get(request)?.fromCookie;
  if (!presented || !cookie || !safeEqual(presented, cookie)) {
    return reject(reply, 'Missing or wrong CSRF token: reload the page and submit its form again.');
  }
  if (body && typeof body === 'object' && CSRF_FIELD in body) delete body[CSRF_FIELD];
  return undefined;
}
