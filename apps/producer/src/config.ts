import { PG_POOLER_HINT, PG_POOLERS } from '@runledger/ledger';
import { z } from 'zod';

function isUrl(value: string, protocols: string[]): boolean {
  try {
    return protocols.includes(new URL(value).protocol.replace(/:$/, ''));
  } catch {
    return false;
  }
}

const url = (protocols: string[]) =>
  z
    .string({ error: 'required' })
    .refine((v) => isUrl(v, protocols), { message: `must be a URL starting with ${protocols.map((p) => `${p}://`).join(' or ')}` });

/** An integer variable from `min` to `max` (strings from the environment are coerced). */
export const int = (min: number, max: number) =>
  z.coerce
    .number({ error: `must be an integer from ${min} to ${max}` })
    .int()
    .min(min)
    .max(max);

/**
 * The producer's environment, with its defaults. Parsed once by main.ts; see .env.example.
 * DATABASE_URL is required. QUEUE_BACKEND defaults to `redis` when REDIS_URL is set, else
 * `postgres` (BullMQ's PostgreSQL backend on DATABASE_URL).
 */
const Env = z.object({
  DATABASE_URL: url(['postgres', 'postgresql']),
  /** `transaction`: DATABASE_URL is a PgBouncer in transaction mode: no prepared statements, no startup options (README, "Running it for real"). */
  RUNLEDGER_PG_POOLER: z.enum(PG_POOLERS, { error: PG_POOLER_HINT }).optional(),
  /** Straight to PostgreSQL, for what needs a session: BullMQ's PostgreSQL backend (LISTEN). Default DATABASE_URL. */
  RUNLEDGER_PG_DIRECT_URL: url(['postgres', 'postgresql']).optional(),
  REDIS_URL: url(['redis', 'rediss', 'redis-cluster']).optional(),
  QUEUE_BACKEND: z.enum(['redis', 'postgres']).optional(),
  /** Default 3000. */
  PORT: int(0, 65_535).default(3000),
  /** Default 127.0.0.1: only this machine; set 0.0.0.0 to listen on every interface. */
  HOST: z.string().min(1).default('127.0.0.1'),
  /** Default public. */
  DB_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'DB_SCHEMA must be a plain lowercase identifier')
    .default('public'),
  /** Default runledger. */
  QUEUE_PREFIX: z.string().min(1).default('runledger'),
  /** Finished deliveries stay visible in Bull Board this many hours. Default 24. */
  DELIVERY_KEEP_COMPLETED_HOURS: z.coerce.number().positive().default(24),
  /** At most this many completed (and as many failed) deliveries are kept. Default 10,000. */
  DELIVERY_KEEP_COMPLETED_COUNT: int(0, 10_000_000).default(10_000),
  /** Failed deliveries stay this many days. Default 7. */
  DELIVERY_KEEP_FAILED_DAYS: z.coerce.number().positive().default(7),
  RUNLEDGER_GRAPHS: z.string().min(1).optional(),
  /** Serve the built-in demo graphs beside a langgraph.json or RUNLEDGER_GRAPHS (`1`/`0`). Default: only when neither is set. */
  RUNLEDGER_BUILTIN_GRAPHS: z.stringbool().optional(),
  /** A LangGraph CLI config (langgraph.json) whose graphs admissions may name; default ./langgraph.json when present. */
  RUNLEDGER_CONFIG: z.string().min(1).optional(),
  /** The version admission records for every graph that declares none (switch it to roll out a new version). Default the version in ./package.json. */
  RUNLEDGER_BUILD_ID: z.string().min(1).optional(),
  /** Default 1 MiB. */
  BODY_LIMIT_BYTES: int(1_024, 100 * 1024 * 1024).default(1024 * 1024),
  /** Admissions answer 503 backlog_full while this many deliveries wait for a worker. Default 100,000; 0 = no limit. */
  MAX_BACKLOG: int(0, 100_000_000).default(100_000),
  /**
   * Group commit window for admissions, in ms: requests within it share one multi-row statement
   * and one addBulk. Default 1 (bench/results 2026-11-30: 0.36× the bare endpoint's req/s at 64
   * connections, p99 107 ms, against 0.31× and p99 90 ms with 0); 0 = each request admits and
   * queues on its own (the ledger still shares statements between concurrent admissions).
   */
  ADMISSION_BATCH_MS: int(0, 50).default(1),
  /** LangGraph API streams, joins and waits this producer holds open at once; beyond it they answer 429. Default 2000. */
  MAX_OPEN_STREAMS: int(1, 1_000_000).default(2_000),
  /** The same, per tenant. Default 200. */
  MAX_OPEN_STREAMS_PER_TENANT: int(1, 1_000_000).default(200),
  /** A LangGraph API state update that would leave a thread's values larger than this (bytes of JSON) answers 413. Default 8 MiB. */
  MAX_THREAD_STATE_BYTES: int(1_024, 1024 * 1024 * 1024).default(8 * 1024 * 1024),
  /** A thread history answer stops before the snapshot that would take it past this many bytes (X-Pagination-Next continues it). Default 4 MiB. */
  HISTORY_MAX_BYTES: int(1_024, 1024 * 1024 * 1024).default(4 * 1024 * 1024),
  /** How often this producer fires due crons, in ms; 0 = never (another producer does). Default 1000. */
  CRON_TICK_MS: int(0, 60_000).default(1_000),
  /**
   * How late a cron's scheduled time may be handled and still run as on time, in ms. Older times
   * were missed (every producer was down) and follow the cron's `missed` policy. Default 5000.
   */
  CRON_MISFIRE_GRACE_MS: int(0, 86_400_000).default(5_000),
  /** Most crons one tenant may have (POST /v1/crons answers 429 beyond it). Default 100. */
  CRON_MAX_PER_TENANT: int(1, 1_000_000).default(100),
  /** Shortest interval a cron's schedule may fire at, in ms (POST /v1/crons answers 422 below it). Default 60000. */
  CRON_MIN_INTERVAL_MS: int(1_000, 86_400_000).default(60_000),
  /**
   * Hosts a run's webhook may name, comma-separated: `hooks.example.com`, `*.example.com`, `*` (any
   * public host). Loopback and private addresses only when listed exactly. Default none: a run
   * with a webhook answers 422.
   */
  WEBHOOK_ALLOWED_HOSTS: z.string().optional(),
  /** Server key each tenant's webhook signing secret is derived from (at least 32 characters); required with WEBHOOK_ALLOWED_HOSTS. */
  WEBHOOK_SIGNING_KEY: z.string().min(32, 'must be at least 32 characters (for example: openssl rand -base64 32)').optional(),
  /** How often this producer sends due webhooks, in ms; 0 = never (another producer does). Default 1000. */
  WEBHOOK_TICK_MS: int(0, 60_000).default(1_000),
  /** Longest one webhook POST may take, in ms. Default 10000. */
  WEBHOOK_TIMEOUT_MS: int(100, 120_000).default(10_000),
  /** How long after a run's end a webhook is retried, in ms. Default 86400000 (a day). */
  WEBHOOK_RETRY_FOR_MS: int(0, 30 * 86_400_000).default(86_400_000),
  /** Wait after a webhook's first failed attempt, in ms, doubled after each further one. Default 1000. */
  WEBHOOK_BACKOFF_MS: int(10, 3_600_000).default(1_000),
  /** Longest wait between two attempts, in ms. Default 600000 (10 minutes). */
  WEBHOOK_BACKOFF_MAX_MS: int(10, 86_400_000).default(600_000),
  /** Default info. */
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  RUNLEDGER_API_KEYS: z.string().optional(),
  RUNLEDGER_ADMIN_KEY: z.string().optional(),
  /**
   * `1`: a dev stack (`npm start` and `runledger dev` set it): web apps on this machine
   * (http://localhost:*, http://127.0.0.1:*) may call the API when neither RUNLEDGER_CORS_ORIGINS
   * nor langgraph.json's `http.cors` says otherwise. Default off.
   */
  RUNLEDGER_DEV: z
    .enum(['0', '1', 'true', 'false'])
    .optional()
    .transform((v) => v === '1' || v === 'true'),
  /** Browser origins allowed to call the API (CORS), before langgraph.json's `http.cors`: comma-separated (`https://app.example.com,http://localhost:5173`) or `*`. Default none. */
  RUNLEDGER_CORS_ORIGINS: z
    .string()
    .optional()
    .transform((v) =>
      v === undefined || v.trim() === ''
        ? undefined
        : v.trim() === '*'
          ? ('*' as const)
          : v
              .split(',')
              .map((o) => o.trim())
              .filter(Boolean),
    ),
  /**
   * `1` serves LangGraph's test hook POST /internal/truncate (deletes the caller's tenant's runs,
   * threads, assistants and checkpoints), for test and dev servers only. Default off: 404.
   */
  RUNLEDGER_TEST_HOOKS: z
    .enum(['0', '1', 'true', 'false'])
    .optional()
    .transform((v) => v === '1' || v === 'true'),
  /** Test hook for crash window B: `after_admit_commit` SIGKILLs the process after an admission commits, before its queue add. */
  RUNLEDGER_TEST_CRASH_AT: z.enum(['after_admit_commit']).optional(),
  /** OTLP/HTTP collector for traces (e.g. http://collector:4318); setting it turns tracing on. */
  OTEL_EXPORTER_OTLP_ENDPOINT: url(['http', 'https']).optional(),
  /** `1` turns tracing on (to OTEL_EXPORTER_OTLP_ENDPOINT, default http://localhost:4318). Default off. */
  RUNLEDGER_TRACING: z.enum(['0', '1', 'true', 'false']).optional(),
});

export type ProducerConfig = z.infer<typeof Env> & { QUEUE_BACKEND: 'redis' | 'postgres' };

/** Thrown with one line per bad variable, each naming it. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parses `env` with `schema`; an empty variable (FOO= in a .env file) counts as unset. Throws ConfigError naming each bad variable. */
export function parseEnvWith<T>(schema: z.ZodType<T>, env: Record<string, string | undefined>): T {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = schema.safeParse(cleaned);
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
  throw new ConfigError(`Invalid producer environment:\n${lines.join('\n')}`);
}

/** Parses the producer's environment (pass `process.env`); throws ConfigError naming each bad variable. */
export function parseConfig(env: Record<string, string | undefined>): ProducerConfig {
  const config = parseEnvWith(Env, env);
  const backend = config.QUEUE_BACKEND ?? (config.REDIS_URL ? 'redis' : 'postgres');
  if (backend === 'redis' && !config.REDIS_URL) throw new ConfigError('Invalid producer environment:\n  REDIS_URL: required when QUEUE_BACKEND=redis');
  if (backend === 'postgres' && config.RUNLEDGER_PG_POOLER && !config.RUNLEDGER_PG_DIRECT_URL)
    throw new ConfigError(
      'Invalid producer environment:\n  RUNLEDGER_PG_DIRECT_URL: required when QUEUE_BACKEND=postgres behind RUNLEDGER_PG_POOLER (BullMQ LISTENs)',
    );
  if (config.WEBHOOK_ALLOWED_HOSTS?.trim() && !config.WEBHOOK_SIGNING_KEY)
    throw new ConfigError('Invalid producer environment:\n  WEBHOOK_SIGNING_KEY: required when WEBHOOK_ALLOWED_HOSTS is set (webhooks are signed)');
  return { ...config, QUEUE_BACKEND: backend };
}
