import type { CustomAuth } from '@runledger/runtime';

/** The producer's security settings (buildApp's `security` option); main.ts fills them from the environment. */
export interface SecurityOptions {
  /** Tenant keys (parseApiKeys of RUNLEDGER_API_KEYS). With none and no `adminKey`, the producer runs open. */
  apiKeys?: ReadonlyArray<{ tenant: string; key: string }>;
  /** RUNLEDGER_ADMIN_KEY: required for /admin, /admin/queues, /metrics and other tenants' jobs. Without it those are denied whenever keys are configured. */
  adminKey?: string;
  /** Per-tenant token bucket (in PostgreSQL, shared by every producer, when buildApp has a ledger). Default off (the producer process too, unless RATE_LIMIT_PER_SECOND is set). */
  rateLimit?: false | { perSecond: number; burst: number };
  /** Token bucket per client address spent by failed authentications. Default `rateLimit`; the producer process defaults to 100/s, burst 200. */
  failedAuthLimit?: false | { perSecond: number; burst: number };
  /** Largest `metadata` of an admission, in bytes of JSON. Default 16 KiB. */
  metadataLimitBytes?: number;
  /** Fastify requestTimeout: the longest a request may take to arrive in full. Default 30 s. */
  requestTimeoutMs?: number;
  /** Fastify connectionTimeout: an idle socket is closed after this long. Default 60 s. */
  connectionTimeoutMs?: number;
  /** Lifetime of the admin browser session cookie. Default 8 h. */
  adminSessionTtlMs?: number;
  /** Mark cookies `Secure` (HTTPS only). Default false; main.ts sets it when NODE_ENV=production. */
  secureCookies?: boolean;
  /** More values the log must never show (connection-string passwords, encryption keys); the API and admin keys are added by themselves. */
  logSecrets?: readonly string[];
  /** langgraph.json's `auth.path` (loadCustomAuth): its `authenticate` and `on(…)` handlers govern the LangGraph API. */
  customAuth?: CustomAuth;
}

/** The options buildApp takes on top of AppOptions. */
export interface SecuredAppOptions {
  /** Authentication, limits and browser protections. Default: open (no keys), no rate limit. */
  security?: SecurityOptions;
}

/** SecurityOptions with every default applied. */
export type ResolvedSecurity = Required<Omit<SecurityOptions, 'adminKey' | 'customAuth'>> & Pick<SecurityOptions, 'adminKey' | 'customAuth'>;

/** Applies the defaults of SecurityOptions. */
export function resolveSecurity(options: SecurityOptions = {}): ResolvedSecurity {
  return {
    apiKeys: options.apiKeys ?? [],
    adminKey: options.adminKey || undefined,
    rateLimit: options.rateLimit ?? false,
    failedAuthLimit: options.failedAuthLimit ?? options.rateLimit ?? false,
    metadataLimitBytes: options.metadataLimitBytes ?? 16 * 1024,
    requestTimeoutMs: options.requestTimeoutMs ?? 30_000,
    connectionTimeoutMs: options.connectionTimeoutMs ?? 60_000,
    adminSessionTtlMs: options.adminSessionTtlMs ?? 8 * 60 * 60 * 1000,
    secureCookies: options.secureCookies ?? false,
    logSecrets: options.logSecrets ?? [],
    customAuth: options.customAuth,
  };
}
