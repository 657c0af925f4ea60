import type { FastifyRequest } from 'fastify';
import { ApiError } from '../http-errors';
import type { AuthContext } from './custom-auth';
import type { Caller } from './keys';

/** What the security hooks learnt about a request, for the routes to use. */
export interface RequestSecurity {
  caller: Caller;
  /** Whether keys are configured (false: open mode). */
  authEnabled: boolean;
  metadataLimitBytes: number;
  /** The user langgraph.json's custom `authenticate` returned (LangGraph API requests under custom auth). */
  authUser?: AuthContext;
}

const byRequest = new WeakMap<FastifyRequest, RequestSecurity>();

/** Records what the auth hook decided; called once per protected request. */
export function setRequestSecurity(request: FastifyRequest, security: RequestSecurity): void {
  byRequest.set(request, security);
}

/** The security facts of a request. Throws when the route is public (no caller was established). */
export function requestSecurity(request: FastifyRequest): RequestSecurity {
  const found = byRequest.get(request);
  if (!found) throw new Error(`No caller for ${request.method} ${request.url}: the route is public or security is not installed.`);
  return found;
}

/** The caller of a protected request; throws like requestSecurity. */
export function callerOf(request: FastifyRequest): Caller {
  return requestSecurity(request).caller;
}

/** The tenant a read or an operator action is limited to: the caller's, or undefined (every tenant) for the admin and in open mode. */
export function tenantScope(request: FastifyRequest): string | undefined {
  const caller = callerOf(request);
  return caller.admin ? undefined : caller.tenant;
}

/** The tenant an admission by this caller belongs to; never taken from the request body. */
export function admissionTenant(request: FastifyRequest): string {
  return callerOf(request).tenant;
}

/** Throws 400 invalid_request when `metadata` is larger than the limit (METADATA_LIMIT_BYTES), counted in bytes of JSON. */
export function checkMetadataSize(request: FastifyRequest, metadata: Record<string, unknown> | undefined): void {
  if (metadata === undefined) return;
  const limit = requestSecurity(request).metadataLimitBytes;
  const size = Buffer.byteLength(JSON.stringify(metadata), 'utf8');
  if (size > limit) throw new ApiError(400, 'invalid_request', `body.metadata is ${size} bytes of JSON; the limit is ${limit} (METADATA_LIMIT_BYTES).`);
}

/** The custom-auth user of a request; undefined without custom auth (and on /info). */
export function authUserOf(request: FastifyRequest): AuthContext | undefined {
  return byRequest.get(request)?.authUser;
}
