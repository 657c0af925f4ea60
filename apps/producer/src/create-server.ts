import { createPool, Ledger, LedgerError, schemaVersion } from '@runledger/ledger';
import { openQueue } from '@runledger/queue';
import { findLangGraphConfig, type GraphDefinition, loadGraphs, readLangGraphConfig } from '@runledger/runtime';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app';
import { ConfigError, parseConfig } from './config';
import { CronTicker } from './cron-ticker';
import { corsPolicy } from './langgraph-api';
import { parseSecurityEnv } from './security';

export interface CreateServerOptions {
  /** Your GraphDefinitions, beside the built-in ones and those of the langgraph.json. */
  graphs?: GraphDefinition[];
  /** A langgraph.json whose graphs admissions may name. Default RUNLEDGER_CONFIG, else ./langgraph.json when present. */
  config?: string;
  databaseUrl?: string;
  redisUrl?: string;
  port?: number;
  host?: string;
  /** Any other setting by its environment name (see the README); the options above win. Default process.env. */
  env?: NodeJS.ProcessEnv;
}

export interface ProducerServer {
  app: FastifyInstance;
  /** Listens on PORT / HOST; resolves with the address. */
  listen(): Promise<string>;
  /** Stops taking requests, finishes those in flight, then closes the queue and the pool. */
  close(): Promise<void>;
}

/**
 * Stops start-up when the schema lacks migrations (a deployment mistake). An unreachable
 * database does not stop it: admissions answer 503 and /readyz says why until it is back.
 */
async function checkSchema(ledger: Ledger, schema: string, warn: (message: string) => void): Promise<void> {
  try {
    await ledger.list({ limit: 1 });
  } catch (err) {
    if (err instanceof LedgerError && err.code === 'DATABASE_UNAVAILABLE') return warn(`PostgreSQL is unreachable at start-up: ${err.message}`);
    throw new ConfigError(`Schema "${schema}" cannot be read (${(err as Error).message}): run \`npm run migrate\` first.`);
  }
  const version = await schemaVersion(ledger.pool);
  if (version.current < version.latest) {
    throw new ConfigError(`Schema "${schema}" is at migration ${version.current} of ${version.latest}: run \`npm run migrate\` first.`);
  }
}

/**
 * The producer (what `runledger producer` and `npm run producer` run): admission API, dashboard
 * and Bull Board on a pool and a queue it opens. Throws ConfigError naming a bad setting, a graph
 * entry that cannot be loaded, or a schema that needs migrating.
 */
export async function createServer(options: CreateServerOptions = {}): Promise<ProducerServer> {
  const given = {
    DATABASE_URL: options.databaseUrl,
    REDIS_URL: options.redisUrl,
    PORT: options.port?.toString(),
    HOST: options.host,
    RUNLEDGER_CONFIG: options.config,
  };
  const env = { ...(options.env ?? process.env), ...Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)) };
  const config = parseConfig(env);
  const secured = parseSecurityEnv(env);
  const configPath = findLangGraphConfig(config.RUNLEDGER_CONFIG, process.cwd());
  const loaded = await loadGraphs({
    modulePath: config.RUNLEDGER_GRAPHS,
    configPath,
    // Said again by every worker, which runs the graphs; here only the admission check uses them.
    notice: () => {},
    buildId: config.RUNLEDGER_BUILD_ID,
    extra: options.graphs,
  }).catch((err: Error) => {
    throw new ConfigError(`[runledger producer] ${err.message}`);
  });
  const graphs = loaded;
  const pool = createPool({ connectionString: config.DATABASE_URL, schema: config.DB_SCHEMA, max: 20 });
  const ledger = new Ledger(pool, { crypto: secured.crypto });
  const queue = openQueue({
    backend: config.QUEUE_BACKEND,
    redisUrl: config.REDIS_URL,
    databaseUrl: config.DATABASE_URL,
    schema: config.DB_SCHEMA,
    prefix: config.QUEUE_PREFIX,
    retention: {
      completedHours: config.DELIVERY_KEEP_COMPLETED_HOURS,
      completedCount: config.DELIVERY_KEEP_COMPLETED_COUNT,
      failedDays: config.DELIVERY_KEEP_FAILED_DAYS,
    },
  });
  const tracingOn = config.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined || config.RUNLEDGER_TRACING === '1' || config.RUNLEDGER_TRACING === 'true';
  // The OpenTelemetry SDK is loaded only when tracing is on.
  const tracing = tracingOn
    ? (await import('@runledger/telemetry')).startTracing({ serviceName: 'runledger-producer', endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT })
    : undefined;
  const app = buildApp({
    tracer: tracing?.tracer,
    ledger,
    queue,
    graphs,
    schema: config.DB_SCHEMA,
    bodyLimitBytes: config.BODY_LIMIT_BYTES,
    maxBacklog: config.MAX_BACKLOG,
    groupCommit: config.ADMISSION_BATCH_MS > 0 ? { windowMs: config.ADMISSION_BATCH_MS } : false,
    logger: { level: config.LOG_LEVEL },
    crashAt: config.RUNLEDGER_TEST_CRASH_AT,
    cors: corsPolicy(config.RUNLEDGER_CORS_ORIGINS, configPath ? readLangGraphConfig(configPath).cors : undefined, config.RUNLEDGER_DEV),
    security: secured.security,
  });
  const log = app.log;

  // Loud on purpose: stderr even when LOG_LEVEL hides warnings.
  if (secured.open) console.error('\n*** RUNLEDGER PRODUCER: AUTHENTICATION IS OFF (set RUNLEDGER_API_KEYS and RUNLEDGER_ADMIN_KEY) ***\n');
  for (const warning of secured.warnings) log.warn(warning);
  log.info(`authentication ${secured.open ? 'off' : 'on'}, encryption at rest ${secured.crypto ? 'on' : 'off'}`);
  await checkSchema(ledger, config.DB_SCHEMA, (m) => log.warn(m));
  const cronTicker = new CronTicker({
    ledger,
    queue,
    tickMs: config.CRON_TICK_MS,
    graceMs: config.CRON_MISFIRE_GRACE_MS,
    enqueueTimeoutMs: 1_000,
    log,
  });

  return {
    app,
    async listen() {
      // BullMQ's PostgreSQL backend migrates its tables on first use: do it before the first
      // admission, whose queue add would otherwise wait for it past the enqueue timeout.
      if (config.QUEUE_BACKEND === 'postgres') await queue.waitUntilReady();
      const address = await app.listen({ port: config.PORT, host: config.HOST });
      log.info(`queue backend ${config.QUEUE_BACKEND}, schema ${config.DB_SCHEMA}, graphs: ${[...graphs.keys()].join(', ')}`);
      cronTicker.start();
      return address;
    },
    async close() {
      // Stop taking requests and finish the ones in flight before the pool and the queue go.
      await cronTicker.stop();
      await app.close();
      await Promise.allSettled([queue.close(), pool.end(), tracing?.shutdown()]);
    },
  };
}
