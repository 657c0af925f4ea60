// The producer process: reads the environment (the only file that does), opens the pool and the
// queue, serves the HTTP API, and closes everything on SIGTERM/SIGINT. `npm run producer`.
import { createPool, Ledger, LedgerError, schemaVersion } from '@runledger/ledger';
import { openQueue } from '@runledger/queue';
import { loadGraphs } from '@runledger/runtime';
import { buildApp } from './app';
import { ConfigError, parseConfig } from './config';

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
  const graphs = await loadGraphs(config.RUNLEDGER_GRAPHS);
  const pool = createPool({ connectionString: config.DATABASE_URL, schema: config.DB_SCHEMA, max: 20 });
  const ledger = new Ledger(pool);
  const queue = openQueue({
    backend: config.QUEUE_BACKEND,
    redisUrl: config.REDIS_URL,
    databaseUrl: config.DATABASE_URL,
    schema: config.DB_SCHEMA,
    prefix: config.QUEUE_PREFIX,
  });
  const app = buildApp({
    ledger,
    queue,
    graphs,
    schema: config.DB_SCHEMA,
    bodyLimitBytes: config.BODY_LIMIT_BYTES,
    groupCommit: config.ADMISSION_BATCH_MS > 0 ? { windowMs: config.ADMISSION_BATCH_MS } : false,
    logger: { level: config.LOG_LEVEL },
  });
  const log = app.log;

  if (config.RUNLEDGER_API_KEYS || config.RUNLEDGER_ADMIN_KEY) {
    log.warn('RUNLEDGER_API_KEYS / RUNLEDGER_ADMIN_KEY are set, but this producer does not check keys yet: every caller is served as tenant "default".');
  } else {
    log.warn('Authentication is OFF (RUNLEDGER_API_KEYS unset): anyone who can reach this port can submit and operate jobs.');
  }
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
    await Promise.allSettled([queue.close(), pool.end()]);
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
