import { hostname } from 'node:os';
import { PG_POOLER_HINT, PG_POOLERS, parseEncryptionKeys } from '@runledger/ledger';
import { z } from 'zod';

const int = (def: number, min = 1) => z.coerce.number().int().min(min).default(def);

/** The worker's environment, parsed once at start-up. Defaults are documented in .env.example. */
export const WorkerEnv = z
  .object({
    DATABASE_URL: z.string().url({ message: 'must be a postgres:// URL' }),
    /** `transaction`: DATABASE_URL is a PgBouncer in transaction mode: no prepared statements, no startup options (README, "Running it for real"). */
    RUNLEDGER_PG_POOLER: z.enum(PG_POOLERS, { error: PG_POOLER_HINT }).optional(),
    /** Straight to PostgreSQL, for what needs a session: BullMQ's PostgreSQL backend (LISTEN). Default DATABASE_URL. */
    RUNLEDGER_PG_DIRECT_URL: z.string().url({ message: 'must be a postgres:// URL' }).optional(),
    REDIS_URL: z.string().url({ message: 'must be a redis:// URL' }).optional(),
    QUEUE_BACKEND: z.enum(['redis', 'postgres']).optional(),
    QUEUE_PREFIX: z.string().min(1).default('runledger'),
    /** Finished deliveries stay visible in Bull Board this many hours (default 24), at most DELIVERY_KEEP_COMPLETED_COUNT (default 10,000). */
    DELIVERY_KEEP_COMPLETED_HOURS: z.coerce.number().positive().default(24),
    DELIVERY_KEEP_COMPLETED_COUNT: int(10_000, 0),
    /** Failed deliveries stay this many days. Default 7. */
    DELIVERY_KEEP_FAILED_DAYS: z.coerce.number().positive().default(7),
    DB_SCHEMA: z
      .string()
      .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a lowercase identifier')
      .default('public'),
    LEASE_TTL_MS: int(5_000, 500),
    WORKER_CONCURRENCY: int(16),
    /** PostgreSQL connections of the worker's pool. Default min(WORKER_CONCURRENCY + 4, 20): runs hold one only while a statement runs, never across a model call. */
    WORKER_DB_POOL_MAX: z.coerce.number().int().min(2).optional(),
    RUNLEDGER_WORKER_ID: z.string().min(1).default(`${hostname()}-${process.pid}`),
    RUNLEDGER_GRAPHS: z.string().optional(),
    /** Serve the built-in demo graphs beside a langgraph.json or RUNLEDGER_GRAPHS (`1`/`0`). Default: only when neither is set. */
    RUNLEDGER_BUILTIN_GRAPHS: z.stringbool().optional(),
    /** A LangGraph CLI config (langgraph.json) whose graphs this worker serves; default ./langgraph.json when present. */
    RUNLEDGER_CONFIG: z.string().optional(),
    /** The version of every graph that declares none. Default the version in ./package.json. */
    RUNLEDGER_BUILD_ID: z.string().min(1).optional(),
    /** The worker's pool: the graphs it serves, each optionally with a limit (`echo,vacation:2`). Default every graph, no per-graph limit. */
    RUNLEDGER_WORKER_GRAPHS: z.string().optional(),
    JOB_TIMEOUT_MS: int(15 * 60_000, 100),
    DRAIN_GRACE_MS: int(5_000, 0),
    DRAIN_DEADLINE_MS: int(20_000, 100),
    SWEEP_INTERVAL_MS: int(1_000, 50),
    /** How long a starting worker waits for Redis (QUEUE_BACKEND=redis) before it exits 1. Default 30 s. */
    REDIS_STARTUP_WAIT_MS: int(30_000, 0),
    /** A prioritized job waiting longer than this (ms) is moved ahead of every prioritized job; 0 = off (strict priorities). Default 5 minutes. */
    PRIORITY_AGING_MS: int(300_000, 0),
    LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
    /** `kid:base64key[,kid:base64key…]`: encrypts job input, results and effect results at rest (the first key seals, all open). Default off. */
    RUNLEDGER_ENCRYPTION_KEY: z
      .string()
      .superRefine((value, ctx) => {
        try {
          parseEncryptionKeys(value);
        } catch (err) {
          // The parser's message names the entry, never the key material.
          ctx.addIssue({ code: 'custom', message: (err as Error).message });
        }
      })
      .optional(),
    RUNLEDGER_TEST_CRASH_AT: z.enum(['after_claim', 'after_invoke']).optional(),
    /** Port of this worker's Prometheus /metrics. Default 9464; 0 turns it off. */
    METRICS_PORT: z.coerce.number().int().min(0).max(65_535).default(9464),
    /**
     * Address the metrics port listens on. Default 127.0.0.1, like the producer: /metrics has no
     * credentials. Set 0.0.0.0 for a Prometheus on another host (the container and k8s set-ups do).
     */
    METRICS_HOST: z.string().min(1).default('127.0.0.1'),
    /** Retention: drop days of job events older than this many days and prune the threads whose every job finished before then (RETENTION_CHECKPOINTS, RETENTION_JOBS). Unset = off. */
    RETENTION_DAYS: z.coerce.number().positive().optional(),
    /** What retention keeps of a pruned thread's LangGraph checkpoints: none, the latest (state stays readable) or all. Default none. */
    RETENTION_CHECKPOINTS: z.enum(['none', 'last', 'all']).default('none'),
    /**
     * What retention does with the job rows of pruned threads: delete (with their effects, stream logs
     * and sent webhook deliveries; an idempotency key is then honoured only until RETENTION_DAYS after
     * its thread finished) or keep (job rows and effects stay for ever). Default delete.
     */
    RETENTION_JOBS: z.enum(['delete', 'keep'], { error: (issue) => `must be delete or keep (got ${JSON.stringify(issue.input)})` }).default('delete'),
    /** Time between retention passes. Default one hour. */
    RETENTION_INTERVAL_MS: int(3_600_000, 1_000),
    /** OTLP/HTTP collector for traces (e.g. http://collector:4318); setting it turns tracing on. */
    OTEL_EXPORTER_OTLP_ENDPOINT: z.string().url({ message: 'must be an http(s):// URL' }).optional(),
    /** `1` turns tracing on (to OTEL_EXPORTER_OTLP_ENDPOINT, default http://localhost:4318). Default off. */
    RUNLEDGER_TRACING: z.enum(['0', '1', 'true', 'false']).optional(),
  })
  .transform((env) => ({ ...env, QUEUE_BACKEND: env.QUEUE_BACKEND ?? (env.REDIS_URL ? 'redis' : 'postgres') }))
  .refine((env) => env.QUEUE_BACKEND !== 'redis' || env.REDIS_URL, { message: 'QUEUE_BACKEND=redis needs REDIS_URL', path: ['REDIS_URL'] })
  .refine((env) => env.QUEUE_BACKEND !== 'postgres' || !env.RUNLEDGER_PG_POOLER || env.RUNLEDGER_PG_DIRECT_URL, {
    message: 'required when QUEUE_BACKEND=postgres behind RUNLEDGER_PG_POOLER (BullMQ LISTENs)',
    path: ['RUNLEDGER_PG_DIRECT_URL'],
  });

export type WorkerEnv = z.infer<typeof WorkerEnv>;

/** Parses the environment or returns one readable line naming every bad variable. */
export function parseWorkerEnv(env: NodeJS.ProcessEnv): { ok: true; env: WorkerEnv } | { ok: false; message: string } {
  // An empty variable means unset (shells and compose files often export VAR=).
  const r = WorkerEnv.safeParse(Object.fromEntries(Object.entries(env).filter(([, v]) => v !== '')));
  if (r.success) return { ok: true, env: r.data };
  return { ok: false, message: r.error.issues.map((i) => `${i.path.join('.') || 'environment'}: ${i.message}`).join('; ') };
}
