import { AesGcmPayloadCodec, connectionStringPassword, createPool, createRedactor, Ledger, parseEncryptionKeys, requireMigrated } from '@runledger/ledger';
import { type QueueConfig, waitForRedis } from '@runledger/queue';
import {
  findLangGraphConfig,
  type GraphDefinition,
  type GraphRegistry,
  loadGraphs,
  loadStoreConfig,
  registerPlatformLogger,
  type StoreConfig,
} from '@runledger/runtime';
import { parseWorkerEnv, type WorkerEnv } from './config';
import { createLogger } from './log';
import { type PoolSpec, parsePool, poolGraphs } from './pool';
import { RunledgerWorker } from './runledger-worker';
import { createObservability } from './telemetry-wiring';

export interface CreateWorkerOptions {
  /** Your GraphDefinitions (graphs that use Runledger's hooks), served beside the built-in ones. */
  graphs?: GraphDefinition[];
  /** A langgraph.json whose graphs this worker serves. Default RUNLEDGER_CONFIG, else ./langgraph.json when present. */
  config?: string;
  databaseUrl?: string;
  redisUrl?: string;
  /** Jobs run at once. Default 16 (WORKER_CONCURRENCY). */
  concurrency?: number;
  /** The graphs this worker serves, each optionally with a limit (`echo,vacation:2`). Default RUNLEDGER_WORKER_GRAPHS, else every graph. */
  pool?: string;
  /**
   * Any other setting by its environment name (DB_SCHEMA, LEASE_TTL_MS, QUEUE_PREFIX, …, see the
   * README); the options above win over these, and these over `process.env`. Default process.env.
   */
  env?: NodeJS.ProcessEnv;
  /** Drain on SIGTERM / SIGINT, then exit the process (0; 130 on a second signal). Default true. */
  handleSignals?: boolean;
}

/** A start-up failure: `exitCode` 2 for configuration (bad variable, bad graph entry), 1 otherwise. */
export class WorkerStartError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'WorkerStartError';
  }
}

export interface WorkerProcess {
  /** Starts the worker; resolves once it consumes deliveries. Throws WorkerStartError. */
  run(): Promise<void>;
  /** Graceful stop: running jobs stop at a step boundary and are handed back; then everything closes. */
  stop(): Promise<void>;
}

function settings(o: CreateWorkerOptions): WorkerEnv {
  const given: Record<string, string | undefined> = {
    DATABASE_URL: o.databaseUrl,
    REDIS_URL: o.redisUrl,
    WORKER_CONCURRENCY: o.concurrency?.toString(),
    RUNLEDGER_CONFIG: o.config,
    RUNLEDGER_WORKER_GRAPHS: o.pool,
  };
  const chosen = Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined));
  const parsed = parseWorkerEnv({ ...(o.env ?? process.env), ...chosen });
  if (!parsed.ok) throw new WorkerStartError(`bad configuration: ${parsed.message}`, 2);
  return parsed.env;
}

/**
 * A worker process's whole set-up (what `runledger worker` and `npm run worker` run): pool,
 * ledger, graphs, metrics, the BullMQ consumer, lease keeper and reconciler, and the drain on
 * SIGTERM. Settings are checked when `run()` is called.
 */
export function createWorker(options: CreateWorkerOptions = {}): WorkerProcess {
  let stop: () => Promise<void> = async () => {};
  return {
    async run() {
      stop = await start(options);
    },
    stop: () => stop(),
  };
}

async function start(options: CreateWorkerOptions): Promise<() => Promise<void>> {
  const env = settings(options);
  const encryptionKeys = env.RUNLEDGER_ENCRYPTION_KEY ? parseEncryptionKeys(env.RUNLEDGER_ENCRYPTION_KEY) : [];
  // Every log line passes the redactor: keys, connection-string passwords and payload fields never show.
  const redactor = createRedactor([
    env.RUNLEDGER_ENCRYPTION_KEY,
    ...encryptionKeys.map((k) => k.key.toString('base64')),
    connectionStringPassword(env.DATABASE_URL),
    connectionStringPassword(env.REDIS_URL),
  ]);
  const writeLog = createLogger({ service: 'worker', workerId: env.RUNLEDGER_WORKER_ID }, env.LOG_LEVEL);
  const log: typeof writeLog = (level, msg, fields) => writeLog(level, redactor.text(msg), redactor.value(fields ?? {}) as Record<string, unknown>);

  // Before the graphs load: a graph written for LangGraph Platform takes `getLogger()` at import time.
  registerPlatformLogger(log);
  let graphs: GraphRegistry;
  let pool: PoolSpec | undefined;
  let store: StoreConfig | undefined;
  try {
    pool = env.RUNLEDGER_WORKER_GRAPHS === undefined ? undefined : parsePool(env.RUNLEDGER_WORKER_GRAPHS);
    graphs = await loadGraphs({
      modulePath: env.RUNLEDGER_GRAPHS,
      configPath: findLangGraphConfig(env.RUNLEDGER_CONFIG, process.cwd()),
      notice: (message) => log('warn', message),
      buildId: env.RUNLEDGER_BUILD_ID,
      extra: options.graphs,
      builtIns: env.RUNLEDGER_BUILTIN_GRAPHS,
    });
    graphs = poolGraphs(graphs, pool);
    store = await loadStoreConfig(findLangGraphConfig(env.RUNLEDGER_CONFIG, process.cwd()));
  } catch (err) {
    throw new WorkerStartError((err as Error).message, 2, { cause: err });
  }

  const dbPool = createPool({
    connectionString: env.DATABASE_URL,
    schema: env.DB_SCHEMA,
    max: env.WORKER_DB_POOL_MAX ?? Math.min(env.WORKER_CONCURRENCY + 4, 20),
    pooler: env.RUNLEDGER_PG_POOLER,
    onError: (e) => log('warn', 'idle PostgreSQL client error', { error: e.message }),
  });
  const queueConfig: QueueConfig = {
    backend: env.QUEUE_BACKEND,
    redisUrl: env.REDIS_URL,
    databaseUrl: env.RUNLEDGER_PG_DIRECT_URL ?? env.DATABASE_URL,
    schema: env.DB_SCHEMA,
    prefix: env.QUEUE_PREFIX,
    retention: {
      completedHours: env.DELIVERY_KEEP_COMPLETED_HOURS,
      completedCount: env.DELIVERY_KEEP_COMPLETED_COUNT,
      failedDays: env.DELIVERY_KEEP_FAILED_DAYS,
    },
  };
  // Before anything else opens: a schema to migrate or a Redis that never answers is one clear line and an exit.
  try {
    await requireMigrated(dbPool, env.DB_SCHEMA);
    await waitForRedis(queueConfig, {
      deadlineMs: env.REDIS_STARTUP_WAIT_MS,
      onFirstFailure: (address, err) =>
        log('warn', `Redis at ${address} is unreachable (${err.message}); retrying for up to ${Math.round(env.REDIS_STARTUP_WAIT_MS / 1000)} s`),
    });
  } catch (err) {
    await dbPool.end();
    throw new WorkerStartError(`could not start: ${(err as Error).message}`, 1, { cause: err });
  }
  const crypto = encryptionKeys.length > 0 ? new AesGcmPayloadCodec(encryptionKeys) : undefined;
  const ledger = new Ledger(dbPool, { leaseTtlMs: env.LEASE_TTL_MS, crypto });
  // The heartbeat's own connection: with every connection of dbPool busy and runs queued for
  // one, a heartbeat waiting behind them let leases run out (bench/model-bound.ts at c=1,000).
  const leasePool = createPool({
    connectionString: env.DATABASE_URL,
    schema: env.DB_SCHEMA,
    max: 1,
    pooler: env.RUNLEDGER_PG_POOLER,
    onError: (e) => log('warn', 'idle PostgreSQL client error', { error: e.message }),
  });
  const leaseLedger = new Ledger(leasePool, { leaseTtlMs: env.LEASE_TTL_MS, crypto });
  const observability = await createObservability({
    ledger,
    log,
    metricsPort: env.METRICS_PORT,
    metricsHost: env.METRICS_HOST,
    tracing:
      env.OTEL_EXPORTER_OTLP_ENDPOINT || env.RUNLEDGER_TRACING === '1' || env.RUNLEDGER_TRACING === 'true'
        ? { endpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT }
        : false,
    retentionDays: env.RETENTION_DAYS,
    retentionIntervalMs: env.RETENTION_INTERVAL_MS,
    retentionCheckpoints: env.RETENTION_CHECKPOINTS,
    retentionJobs: env.RETENTION_JOBS,
  });
  const worker = new RunledgerWorker({
    ledger,
    graphs: observability.graphs(graphs),
    workerId: env.RUNLEDGER_WORKER_ID,
    schema: env.DB_SCHEMA,
    queueConfig,
    leaseLedger,
    concurrency: env.WORKER_CONCURRENCY,
    graphConcurrency: pool,
    defaultTimeoutMs: env.JOB_TIMEOUT_MS,
    drainGraceMs: env.DRAIN_GRACE_MS,
    sweepIntervalMs: env.SWEEP_INTERVAL_MS,
    priorityAgingMs: env.PRIORITY_AGING_MS,
    crashAt: env.RUNLEDGER_TEST_CRASH_AT,
    store,
    log,
    aroundDelivery: observability.aroundDelivery,
    onOutcome: (jobId, o, timing) => {
      observability.onOutcome(jobId, o, timing);
      log('debug', 'delivery done', { jobId, ...o });
    },
  });

  try {
    await worker.start();
    await observability.start(worker);
  } catch (err) {
    throw new WorkerStartError(`could not start: ${(err as Error).message}`, 1, { cause: err });
  }
  log('info', 'worker started', {
    encryptionAtRest: crypto !== undefined,
    backend: env.QUEUE_BACKEND,
    concurrency: env.WORKER_CONCURRENCY,
    leaseTtlMs: env.LEASE_TTL_MS,
    graphs: [...graphs].map(([name, def]) => `${name}@${def.version}`),
  });

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      await worker.drain();
      await observability.close();
      await Promise.all([dbPool.end(), leasePool.end()]);
      log('info', 'worker stopped');
    })();
    return stopping;
  };
  if (options.handleSignals !== false) {
    const shutdown = async (signal: string) => {
      if (stopping) {
        log('warn', `second ${signal}: exiting now`);
        process.exit(130);
      }
      log('info', `${signal}: draining`, { activeRuns: worker.activeRuns });
      const deadline = setTimeout(() => {
        log('error', `drain deadline of ${env.DRAIN_DEADLINE_MS} ms passed; exiting`);
        process.exit(1);
      }, env.DRAIN_DEADLINE_MS);
      deadline.unref();
      await stop();
      process.exit(0);
    };
    process.on('SIGTERM', () => void shutdown('SIGTERM'));
    process.on('SIGINT', () => void shutdown('SIGINT'));
  }
  return stop;
}
