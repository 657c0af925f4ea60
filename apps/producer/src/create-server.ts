import { createPool, Ledger, LedgerError, LedgerStore, requireMigrated, takeRateToken, WebhookOutbox } from '@runledger/ledger';
import { openQueue } from '@runledger/queue';
import {
  findLangGraphConfig,
  type GraphConfigDefaults,
  type GraphDefinition,
  loadCustomAuth,
  loadGraphs,
  loadStoreConfig,
  parseGraphConfigDefaults,
  readLangGraphConfig,
  registerPlatformLogger,
} from '@runledger/runtime';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app';
import { ConfigError, parseConfig } from './config';
import { CronTicker } from './cron-ticker';
import { corsPolicy } from './langgraph-api';
import { parseSecurityEnv, sharedBuckets, tenantBucket } from './security';
import { StoreSweeper } from './store-sweeper';
import { WebhookDestinations } from './webhooks/destinations';
import { WebhookDispatcher } from './webhooks/dispatcher';

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
    await requireMigrated(ledger.pool, schema);
  } catch (err) {
    if (err instanceof LedgerError && err.code === 'DATABASE_UNAVAILABLE') return warn(`PostgreSQL is unreachable at start-up: ${err.message}`);
    throw new ConfigError((err as Error).message, { cause: err });
  }
}

/**
 * LANGGRAPH_CONFIG's default config and context per graph, as LangGraph's server reads it. Read
 * after the graphs load: a langgraph.json may set it in its `env` (which then lands in process.env).
 */
function graphDefaults(text: string | undefined): GraphConfigDefaults {
  try {
    return parseGraphConfigDefaults(text);
  } catch (err) {
    throw new ConfigError(`Invalid producer environment:\n  ${(err as Error).message}`);
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
    builtIns: config.RUNLEDGER_BUILTIN_GRAPHS,
  }).catch((err: Error) => {
    throw new ConfigError(err.message, { cause: err });
  });
  const graphs = loaded;
  // langgraph.json's auth.path: the project's Auth object governs the LangGraph API (SECURITY.md, "Custom auth").
  const customAuth = await loadCustomAuth(configPath).catch((err: Error) => {
    throw new ConfigError(err.message, { cause: err });
  });
  const store = await loadStoreConfig(configPath).catch((err: Error) => {
    throw new ConfigError(err.message, { cause: err });
  });
  const graphConfig = graphDefaults(env.LANGGRAPH_CONFIG ?? process.env.LANGGRAPH_CONFIG);
  const pool = createPool({ connectionString: config.DATABASE_URL, schema: config.DB_SCHEMA, max: 20, pooler: config.RUNLEDGER_PG_POOLER });
  const ledger = new Ledger(pool, { crypto: secured.crypto });
  const queue = openQueue({
    backend: config.QUEUE_BACKEND,
    redisUrl: config.REDIS_URL,
    databaseUrl: config.RUNLEDGER_PG_DIRECT_URL ?? config.DATABASE_URL,
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
  const webhooks = { destinations: WebhookDestinations.parse(config.WEBHOOK_ALLOWED_HOSTS), signingKey: config.WEBHOOK_SIGNING_KEY };
  const app = buildApp({
    webhooks,
    tracer: tracing?.tracer,
    ledger,
    queue,
    graphs,
    graphConfig,
    store,
    schema: config.DB_SCHEMA,
    bodyLimitBytes: config.BODY_LIMIT_BYTES,
    maxBacklog: config.MAX_BACKLOG,
    groupCommit: config.ADMISSION_BATCH_MS > 0 ? { windowMs: config.ADMISSION_BATCH_MS } : false,
    logger: { level: config.LOG_LEVEL },
    crashAt: config.RUNLEDGER_TEST_CRASH_AT,
    testHooks: config.RUNLEDGER_TEST_HOOKS,
    streams: { limits: { max: config.MAX_OPEN_STREAMS, perTenant: config.MAX_OPEN_STREAMS_PER_TENANT } },
    threadState: { maxBytes: config.MAX_THREAD_STATE_BYTES, historyMaxBytes: config.HISTORY_MAX_BYTES },
    cors: corsPolicy(config.RUNLEDGER_CORS_ORIGINS, configPath ? readLangGraphConfig(configPath).cors : undefined, config.RUNLEDGER_DEV),
    security: { ...secured.security, customAuth },
    cronLimits: { maxPerTenant: config.CRON_MAX_PER_TENANT, minIntervalMs: config.CRON_MIN_INTERVAL_MS },
  });
  const log = app.log;
  // Graph code's `getLogger()` lines (its module may hold the logger since its import) go to this log.
  registerPlatformLogger((level, msg, fields) => log[level](fields, msg));

  // Loud on purpose: stderr even when LOG_LEVEL hides warnings.
  if (secured.open && !customAuth) console.error('\n*** RUNLEDGER PRODUCER: AUTHENTICATION IS OFF (set RUNLEDGER_API_KEYS and RUNLEDGER_ADMIN_KEY) ***\n');
  for (const warning of secured.warnings) log.warn(warning);
  if (config.RUNLEDGER_TEST_HOOKS)
    log.warn("RUNLEDGER_TEST_HOOKS is on: POST /internal/truncate deletes the calling tenant's runs, threads and assistants. Never set it in production.");
  if (customAuth)
    log.info('custom auth (langgraph.json auth.path) governs the LangGraph API; /v1 and admin routes need RUNLEDGER_API_KEYS / RUNLEDGER_ADMIN_KEY');
  log.info(`authentication ${secured.open && !customAuth ? 'off' : 'on'}, encryption at rest ${secured.crypto ? 'on' : 'off'}`);
  await checkSchema(ledger, config.DB_SCHEMA, (m) => log.warn(m));
  if (store?.index) {
    // Detected and said, not used: search is exact cosine over real[] (docs/decisions/0012-store-index.md).
    const pgvector = await new LedgerStore(pool, { tenant: '' }).pgvectorAvailable().catch(() => false);
    log.info(`store index: ${store.index.dims} dims, exact search in SQL; pgvector ${pgvector ? 'available on this server (not used yet)' : 'not available'}`);
  }
  // Firings spend the bucket of their tenant's requests, the one the app's rate limit keeps in the ledger.
  const rate = secured.security.rateLimit;
  const buckets = rate ? sharedBuckets((key, perSecond, burst) => takeRateToken(pool, key, perSecond, burst), rate.perSecond, rate.burst) : undefined;
  const cronTicker = new CronTicker({
    ledger,
    queue,
    tickMs: config.CRON_TICK_MS,
    graceMs: config.CRON_MISFIRE_GRACE_MS,
    enqueueTimeoutMs: 1_000,
    log,
    charge: buckets && (async (tenant) => buckets.take(tenantBucket(tenant))),
  });
  // Sends only with a signing key: an unsigned webhook is never sent (the rows wait for one).
  const dispatcher = new WebhookDispatcher({
    outbox: new WebhookOutbox(ledger),
    destinations: webhooks.destinations,
    signingKey: webhooks.signingKey ?? '',
    log,
    tickMs: webhooks.signingKey ? config.WEBHOOK_TICK_MS : 0,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    retryForMs: config.WEBHOOK_RETRY_FOR_MS,
    backoffMs: config.WEBHOOK_BACKOFF_MS,
    backoffMaxMs: config.WEBHOOK_BACKOFF_MAX_MS,
    batch: 32,
  });

  const storeSweeper = store?.ttl ? new StoreSweeper(ledger, store.ttl.sweepIntervalMinutes * 60_000, log) : undefined;

  return {
    app,
    async listen() {
      // BullMQ's PostgreSQL backend migrates its tables on first use: do it before the first
      // admission, whose queue add would otherwise wait for it past the enqueue timeout.
      if (config.QUEUE_BACKEND === 'postgres') await queue.waitUntilReady();
      const address = await app.listen({ port: config.PORT, host: config.HOST });
      log.info(`queue backend ${config.QUEUE_BACKEND}, schema ${config.DB_SCHEMA}, graphs: ${[...graphs.keys()].join(', ')}`);
      cronTicker.start();
      dispatcher.start();
      storeSweeper?.start();
      return address;
    },
    async close() {
      // Stop taking requests and finish the ones in flight before the pool and the queue go.
      await Promise.all([cronTicker.stop(), dispatcher.stop(), storeSweeper?.stop()]);
      await app.close();
      await Promise.allSettled([queue.close(), pool.end(), tracing?.shutdown()]);
    },
  };
}
