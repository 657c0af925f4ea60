import type { ServerOptions } from 'node:http';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { authenticate } from './authenticate';
import { Signer } from './cookies';
import { csrfCheck, csrfContext, csrfCookie } from './csrf';
import { securityHeaders } from './headers';
import { KeyRing } from './keys';
import { loginRoutes } from './login';
import { type ResolvedSecurity, resolveSecurity, type SecurityOptions } from './options';
import { type SharedTake, sharedBuckets, TokenBuckets } from './rate-limit';
import { redactingLogger } from './redaction';
import { AdminSessions, type SessionRevocations } from './session';

export { type Access, accessOf, LOGIN_PATH, LOGOUT_PATH } from './access';
export { admissionTenant, authUserOf, callerOf, checkMetadataSize, type RequestSecurity, requestSecurity, tenantScope } from './context';
export { CSRF_COOKIE, CSRF_FIELD, CSRF_HEADER, csrfField, csrfToken } from './csrf';
export { type AuthContext, AuthRefused, type AuthUser, refusalOf, sendRefusal } from './custom-auth';
export { parseSecurityEnv, type SecuritySettings } from './env';
export { CONTENT_SECURITY_POLICY, SECURITY_HEADERS } from './headers';
export { type Caller, DEFAULT_TENANT, KeyRing, parseApiKeys } from './keys';
export { parseFormBody } from './login';
export { type ResolvedSecurity, resolveSecurity, type SecuredAppOptions, type SecurityOptions } from './options';
export { type SharedTake, sharedBuckets, TokenBuckets, tenantBucket } from './rate-limit';
export { REDACT_PATHS } from './redaction';
export type { SessionRevocations } from './session';

// Node looks for requests past requestTimeout every 30 s by default, so a 408 came up to 30 s late.
const TIMEOUT_CHECK_INTERVAL_MS = 1_000;

/** The Fastify server options security sets: request and connection timeouts, and a redacting logger. */
export function securedServerOptions(
  security: SecurityOptions | undefined,
  logger: FastifyServerOptions['logger'],
): Pick<FastifyServerOptions, 'requestTimeout' | 'connectionTimeout' | 'logger'> & { http: ServerOptions } {
  const s = resolveSecurity(security);
  const secrets = [...s.apiKeys.map((k) => k.key), s.adminKey, ...s.logSecrets];
  return {
    requestTimeout: s.requestTimeoutMs,
    connectionTimeout: s.connectionTimeoutMs,
    http: { connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS },
    logger: redactingLogger(logger, secrets),
  };
}

/**
 * Installs authentication (tenant and admin keys, the admin session), the per-tenant rate limit,
 * CSRF protection under /admin, the security headers and the admin login routes on the root app.
 * `revocations` keeps admin logouts (the ledger, so every replica honours them); without it a
 * logout only clears the browser's cookie. `sharedTake` keeps the per-tenant buckets (the ledger,
 * so N replicas allow the rate once); without it they live in this process.
 * Call before registering routes: the hooks then cover every route, including plugins registered
 * later (the dashboard, Bull Board). Throws when the admin key equals a tenant key.
 */
export function installSecurity(
  app: FastifyInstance,
  options: SecurityOptions = {},
  revocations?: SessionRevocations,
  sharedTake?: SharedTake,
): ResolvedSecurity {
  const s = resolveSecurity(options);
  const keys = new KeyRing(s.apiKeys, s.adminKey);
  const sessions = s.adminKey ? new AdminSessions(s.adminKey, s.adminSessionTtlMs, revocations) : undefined;
  // Replicas sharing the admin key accept each other's tokens; without one, tokens live per process.
  const csrfSigner = s.adminKey ? Signer.derive(s.adminKey, 'csrf-v1') : Signer.random();
  // Shared by every producer process when `sharedTake` is given (the ledger), else per process.
  const tenantLimit = !s.rateLimit
    ? undefined
    : sharedTake
      ? sharedBuckets(sharedTake, s.rateLimit.perSecond, s.rateLimit.burst)
      : new TokenBuckets(s.rateLimit.perSecond, s.rateLimit.burst);
  const failureLimit = s.failedAuthLimit ? new TokenBuckets(s.failedAuthLimit.perSecond, s.failedAuthLimit.burst, 10_000) : undefined;

  app.addHook('onRequest', authenticate({ keys, sessions, tenantLimit, failureLimit, metadataLimitBytes: s.metadataLimitBytes, customAuth: s.customAuth }));
  app.addHook('onRequest', csrfContext(csrfSigner, s.secureCookies));
  app.addHook('preValidation', csrfCheck);
  app.addHook('onSend', csrfCookie);
  app.addHook('onSend', securityHeaders);
  void app.register(loginRoutes, { keys, sessions, failureLimit, secureCookies: s.secureCookies });
  return s;
}
