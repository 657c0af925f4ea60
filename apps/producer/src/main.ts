// The producer process: reads the environment (the only file that does), opens the pool and the
// queue, serves the HTTP API, and closes everything on SIGTERM/SIGINT. `npm run producer`.
import { createPool, Ledger, LedgerError, schemaVersion } from '@runledger/ledger';
import { openQueue } from '@runledger/queue';
import { findLangGraphConfig, loadGraphs } from '@runledger/runtime';
import { buildApp } from './app';
import { ConfigError, parseConfig } from './config';
import { parseSecurityEnv } from './security';

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

async function main(): Promise<void> {
  const config = parseConfig(process.env);
  const secured = parseSecurityEnv(process.env);
  const graphs = await loadGraphs({
    modulePath: config.RUNLEDGER_GRAPHS,
    configPath: findLangGraphConfig(config.RUNLEDGER_CONFIG, process.cwd()),
    // Said again by every worker, which runs the graphs; here only the admission check uses them.
    notice: () => {},
  }).catch((err: Error) => {
    throw new ConfigError(`[runledger producer] ${err.message}`);
  });
  const pool = createPool({ connectionString: config.DATABASE_URL, schema: config.DB_SCHEMA, max: 20 });
  const ledger = new Ledger(pool, { crypto: secured.crypto });
  const queue = openQueue({
    backend: config.QUEUE_BACKEND,
    redisUrl: config.REDIS_URL,
    databaseUrl: config.DATABASE_URL,
    schema: config.DB_SCHEMA,
    prefix: config.QUEUE_PREFIX,
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
    groupCommit: config.ADMISSION_BATCH_MS > 0 ? { windowMs: config.ADMISSION_BATCH_MS } : false,
    logger: { level: config.LOG_LEVEL },
    crashAt: config.RUNLEDGER_TEST_CRASH_AT,
    security: secured.security,
  });
  const log = app.log;

  // Loud on purpose: stderr even when LOG_LEVEL hides warnings.
  if (secured.open) console.error('\n*** RUNLEDGER PRODUCER: AUTHENTICATION IS OFF (set RUNLEDGER_API_KEYS and RUNLEDGER_ADMIN_KEY) ***\n');
  for (const warning of secured.warnings) log.warn(warning);
  log.info(`authentication ${secured.open ? 'off' : 'on'}, encryption at rest ${secured.crypto ? 'on' : 'off'}`);
  await checkSchema(ledger, config.DB_SCHEMA, (m) => log.warn(m));

  let closing = false;
  const close = async (signal: string) => {
    if (closing) return;
    closing = true;
    log.info(`${signal}: closing`);
    const force = setTimeout(() => {
      log.error('close took longer than 10 s; exiting');
      process.exit(1);
    }, 10_000);
    force.unref();
    // Stop taking requests and finish the ones in flight before the pool and the queue go.
    await app.close();
    await Promise.allSettled([queue.close(), pool.end(), tracing?.shutdown()]);
    process.exit(0);
  };
  process.once('SIGTERM', () => void close('SIGTERM'));
  process.once('SIGINT', () => void close('SIGINT'));

  await app.listen({ port: config.PORT, host: config.HOST });
  log.info(`queue backend ${config.QUEUE_BACKEND}, schema ${config.DB_SCHEMA}, graphs: ${[...graphs.keys()].join(', ')}`);
}

main().catch((err: Error) => {
  console.error(err instanceof ConfigError ? err.message : `[runledger producer] failed to start: ${err.stack ?? err.message}`);
  process.exit(1);
});
