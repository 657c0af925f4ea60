import { PG_POOLER_HINT, PG_POOLERS, type PgPooler } from '@runledger/ledger/core';
import type { QueueConfig } from '@runledger/queue';
import { z } from 'zod';
import { CliError } from './cli-error';
import { readRuntimeInfo, runledgerHome } from './runtime-file';

const Env = z.object({
  DATABASE_URL: z.string().optional(),
  /** `transaction`: DATABASE_URL is a PgBouncer in transaction mode (README, "Running it for real"). */
  RUNLEDGER_PG_POOLER: z.enum(PG_POOLERS, { error: PG_POOLER_HINT }).optional(),
  /** Straight to PostgreSQL, for what needs a session (migrate, the queue's PostgreSQL backend). */
  RUNLEDGER_PG_DIRECT_URL: z.string().optional(),
  DB_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a plain lowercase identifier')
    .default('public'),
  REDIS_URL: z.string().optional(),
  QUEUE_BACKEND: z.enum(['redis', 'postgres']).optional(),
  QUEUE_PREFIX: z.string().min(1).default('runledger'),
  RUNLEDGER_GRAPHS: z.string().optional(),
  RUNLEDGER_CONFIG: z.string().optional(),
  RUNLEDGER_BUILD_ID: z.string().optional(),
  RUNLEDGER_BUILTIN_GRAPHS: z.stringbool().optional(),
  RUNLEDGER_ENCRYPTION_KEY: z.string().optional(),
  /** How long the deliveries the CLI adds stay visible in Bull Board, as for producer and workers. */
  DELIVERY_KEEP_COMPLETED_HOURS: z.coerce.number().positive().default(24),
  DELIVERY_KEEP_COMPLETED_COUNT: z.coerce.number().int().min(0).default(10_000),
  DELIVERY_KEEP_FAILED_DAYS: z.coerce.number().positive().default(7),
});

/** Where the CLI finds the ledger and the queue. */
export interface CliEnv {
  /** Undefined when neither DATABASE_URL nor a running `npm start` names a database. */
  databaseUrl: string | undefined;
  schema: string;
  /** RUNLEDGER_PG_POOLER: the pooler DATABASE_URL goes through (none from a running `npm start`). */
  pooler: PgPooler | undefined;
  /** RUNLEDGER_PG_DIRECT_URL. */
  directUrl: string | undefined;
  queue: QueueConfig;
  graphsModule: string | undefined;
  /** RUNLEDGER_BUILD_ID: the version `submit` records for a graph that declares none. */
  buildId: string | undefined;
  /** RUNLEDGER_CONFIG (else ./langgraph.json when present, see findLangGraphConfig). */
  configPath: string | undefined;
  /** RUNLEDGER_BUILTIN_GRAPHS: the built-in demo graphs beside the project's (default only when it has none). */
  builtIns: boolean | undefined;
  /** RUNLEDGER_ENCRYPTION_KEY: the keys the producer and workers seal payloads with, so the CLI reads and writes them alike. */
  encryptionKey: string | undefined;
  /** Where the settings came from, for messages. */
  source: 'environment' | 'npm start';
}

/**
 * Reads DATABASE_URL, DB_SCHEMA, REDIS_URL, QUEUE_BACKEND, QUEUE_PREFIX, RUNLEDGER_GRAPHS, RUNLEDGER_CONFIG
 * and RUNLEDGER_ENCRYPTION_KEY (empty = unset); flags override them. Without DATABASE_URL, the stack of a running `npm start`
 * (its `runtime.json` in RUNLEDGER_HOME) is used. Throws a usage CliError naming a bad variable.
 */
export function parseCliEnv(env: NodeJS.ProcessEnv, flags: { databaseUrl?: string; schema?: string }): CliEnv {
  const parsed = Env.safeParse(Object.fromEntries(Object.entries(env).filter(([, v]) => v !== '')));
  if (!parsed.success) {
    throw new CliError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '), 2);
  }
  const e = parsed.data;
  const retention = {
    completedHours: e.DELIVERY_KEEP_COMPLETED_HOURS,
    completedCount: e.DELIVERY_KEEP_COMPLETED_COUNT,
    failedDays: e.DELIVERY_KEEP_FAILED_DAYS,
  };
  const running = flags.databaseUrl || e.DATABASE_URL ? undefined : readRuntimeInfo(runledgerHome(env));
  if (running) {
    const schema = flags.schema ?? running.schema;
    return {
      databaseUrl: running.databaseUrl,
      schema,
      pooler: undefined,
      directUrl: undefined,
      queue: { backend: running.queueBackend, redisUrl: running.redisUrl, databaseUrl: running.databaseUrl, schema, prefix: running.queuePrefix, retention },
      graphsModule: e.RUNLEDGER_GRAPHS,
      buildId: e.RUNLEDGER_BUILD_ID,
      configPath: e.RUNLEDGER_CONFIG,
      builtIns: e.RUNLEDGER_BUILTIN_GRAPHS,
      encryptionKey: e.RUNLEDGER_ENCRYPTION_KEY,
      source: 'npm start',
    };
  }
  const databaseUrl = flags.databaseUrl ?? e.DATABASE_URL;
  const schema = flags.schema ?? e.DB_SCHEMA;
  const backend = e.QUEUE_BACKEND ?? (e.REDIS_URL ? 'redis' : 'postgres');
  if (backend === 'redis' && !e.REDIS_URL) throw new CliError('QUEUE_BACKEND=redis needs REDIS_URL (e.g. redis://127.0.0.1:6379).', 2);
  const queueUrl = e.RUNLEDGER_PG_DIRECT_URL ?? databaseUrl;
  if (backend === 'postgres' && e.RUNLEDGER_PG_POOLER && !e.RUNLEDGER_PG_DIRECT_URL)
    throw new CliError('QUEUE_BACKEND=postgres LISTENs, which RUNLEDGER_PG_POOLER=transaction does not keep: set RUNLEDGER_PG_DIRECT_URL.', 2);
  return {
    databaseUrl,
    schema,
    pooler: e.RUNLEDGER_PG_POOLER,
    directUrl: e.RUNLEDGER_PG_DIRECT_URL,
    queue: { backend, redisUrl: e.REDIS_URL, databaseUrl: queueUrl, schema, prefix: e.QUEUE_PREFIX, retention },
    graphsModule: e.RUNLEDGER_GRAPHS,
    buildId: e.RUNLEDGER_BUILD_ID,
    configPath: e.RUNLEDGER_CONFIG,
    builtIns: e.RUNLEDGER_BUILTIN_GRAPHS,
    encryptionKey: e.RUNLEDGER_ENCRYPTION_KEY,
    source: 'environment',
  };
}
