import { AesGcmPayloadCodec, connectionStringPassword, type PayloadCodec, parseEncryptionKeys } from '@runledger/ledger';
import { z } from 'zod';
import { ConfigError, int, parseEnvWith } from '../config';
import { parseApiKeys, RECOMMENDED_KEY_LENGTH } from './keys';
import type { SecurityOptions } from './options';

// Check a secret's format without ever putting the value into a message.
const parsedBy = (parse: (v: string) => unknown) =>
  z.string().superRefine((value, ctx) => {
    try {
      parse(value);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message });
    }
  });

/**
 * The producer's security environment, with its defaults (see .env.example and SECURITY.md).
 * RUNLEDGER_API_KEYS `tenant:key,…` and RUNLEDGER_ADMIN_KEY unset = authentication off (refused
 * when NODE_ENV=production). RUNLEDGER_ENCRYPTION_KEY `kid:base64key,…` turns on encryption at rest.
 */
/** The failed-authentication limit per client address when RATE_LIMIT_PER_SECOND is unset. */
const FAILED_AUTH_LIMIT = { perSecond: 100, burst: 200 };

const SecurityEnv = z.object({
  NODE_ENV: z.string().optional(),
  RUNLEDGER_API_KEYS: parsedBy(parseApiKeys).optional(),
  RUNLEDGER_ADMIN_KEY: z.string().regex(/^\S+$/, 'must not contain spaces').optional(),
  RUNLEDGER_ENCRYPTION_KEY: parsedBy(parseEncryptionKeys).optional(),
  /**
   * Requests per second per tenant (token bucket in PostgreSQL, shared by every producer). Default unset: no per-tenant limit,
   * so a backend service submitting in bulk meets no throttle it did not ask for; failed
   * authentications are still limited per address at 100/s, burst 200. 0 turns both limits off.
   */
  RATE_LIMIT_PER_SECOND: int(0, 1_000_000).optional(),
  /** Requests a tenant may send at once above the rate. Default twice the rate (200 for the failed-authentication limit). */
  RATE_LIMIT_BURST: int(1, 10_000_000).optional(),
  /** Default 30 s. */
  REQUEST_TIMEOUT_MS: int(1_000, 600_000).default(30_000),
  /** Default 60 s. */
  CONNECTION_TIMEOUT_MS: int(1_000, 3_600_000).default(60_000),
  /** Largest admission metadata, bytes of JSON. Default 16 KiB. */
  METADATA_LIMIT_BYTES: int(256, 1024 * 1024).default(16 * 1024),
  /** Lifetime of an admin browser session. Default 8 h. */
  ADMIN_SESSION_TTL_SECONDS: int(60, 7 * 24 * 3600).default(8 * 3600),
  DATABASE_URL: z.string().optional(),
  REDIS_URL: z.string().optional(),
});

export interface SecuritySettings {
  /** For buildApp's `security` option. */
  security: SecurityOptions;
  /** For the Ledger's `crypto` option; undefined when RUNLEDGER_ENCRYPTION_KEY is unset. */
  crypto: PayloadCodec | undefined;
  /** Whether the producer runs without authentication. */
  open: boolean;
  /** What main.ts logs at start-up (loudly, for open mode). */
  warnings: string[];
}

/**
 * Parses the security variables of `env` (pass `process.env`). Throws ConfigError naming each
 * bad variable (never its value), and when NODE_ENV=production has no keys configured.
 */
export function parseSecurityEnv(env: Record<string, string | undefined>): SecuritySettings {
  const e = parseEnvWith(SecurityEnv, env);
  const apiKeys = parseApiKeys(e.RUNLEDGER_API_KEYS);
  const adminKey = e.RUNLEDGER_ADMIN_KEY;
  if (adminKey && apiKeys.some((k) => k.key === adminKey)) {
    throw new ConfigError('Invalid producer environment:\n  RUNLEDGER_ADMIN_KEY: must differ from every key in RUNLEDGER_API_KEYS');
  }
  const open = apiKeys.length === 0 && !adminKey;
  if (open && e.NODE_ENV === 'production') {
    throw new ConfigError(
      'Refusing to start with authentication off while NODE_ENV=production: set RUNLEDGER_API_KEYS (tenant:key,tenant:key) and RUNLEDGER_ADMIN_KEY.',
    );
  }
  const warnings: string[] = [];
  if (open) {
    warnings.push(
      'AUTHENTICATION IS OFF: RUNLEDGER_API_KEYS and RUNLEDGER_ADMIN_KEY are unset, so anyone who can reach this port can submit, read and operate every job and open /admin. Set them before exposing the producer (NODE_ENV=production refuses to start like this).',
    );
  } else if (!adminKey) {
    warnings.push('RUNLEDGER_ADMIN_KEY is unset: /admin, /admin/queues and /metrics are denied to everyone.');
  }
  const short = apiKeys.filter((k) => k.key.length < RECOMMENDED_KEY_LENGTH).map((k) => k.tenant);
  if (adminKey && adminKey.length < RECOMMENDED_KEY_LENGTH) short.push('the admin key');
  if (short.length > 0)
    warnings.push(`Keys shorter than ${RECOMMENDED_KEY_LENGTH} characters (${short.join(', ')}): use random ones, e.g. openssl rand -hex 32.`);

  const encryptionKeys = e.RUNLEDGER_ENCRYPTION_KEY ? parseEncryptionKeys(e.RUNLEDGER_ENCRYPTION_KEY) : [];
  const logSecrets = [
    e.RUNLEDGER_ENCRYPTION_KEY,
    ...encryptionKeys.map((k) => k.key.toString('base64')),
    connectionStringPassword(e.DATABASE_URL),
    connectionStringPassword(e.REDIS_URL),
  ].filter((s): s is string => s !== undefined);
  const perSecond = e.RATE_LIMIT_PER_SECOND;
  const tenantLimit = perSecond ? { perSecond, burst: e.RATE_LIMIT_BURST ?? 2 * perSecond } : false;
  const security: SecurityOptions = {
    apiKeys,
    adminKey,
    rateLimit: tenantLimit,
    failedAuthLimit: tenantLimit || (perSecond === 0 ? false : FAILED_AUTH_LIMIT),
    metadataLimitBytes: e.METADATA_LIMIT_BYTES,
    requestTimeoutMs: e.REQUEST_TIMEOUT_MS,
    connectionTimeoutMs: e.CONNECTION_TIMEOUT_MS,
    adminSessionTtlMs: e.ADMIN_SESSION_TTL_SECONDS * 1000,
    secureCookies: e.NODE_ENV === 'production',
    logSecrets,
  };
  return { security, crypto: encryptionKeys.length > 0 ? new AesGcmPayloadCodec(encryptionKeys) : undefined, open, warnings };
}
