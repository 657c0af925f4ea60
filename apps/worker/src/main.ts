// `npm run worker`: one worker process configured from the environment (DESIGN §11).
import { AesGcmPayloadCodec, connectionStringPassword, createPool, createRedactor, Ledger, parseEncryptionKeys } from '@runledger/ledger';
import { findLangGraphConfig, loadGraphs } from '@runledger/runtime';
import { parseWorkerEnv } from './config';
import { createLogger } from './log';
import { RunledgerWorker } from './runledger-worker';
import { createObservability } from './telemetry-wiring';

const parsed = parseWorkerEnv(process.env);
if (!parsed.ok) {
  console.error(`runledger worker: bad configuration: ${parsed.message}`);
  process.exit(2);
}
const env = parsed.env;
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

const pool = createPool({
  connectionString: env.DATABASE_URL,
  schema: env.DB_SCHEMA,
  max: env.WORKER_CONCURRENCY + 4,
  onError: (e) => log('warn', 'idle PostgreSQL client error', { error: e.message }),
});
const crypto = encryptionKeys.length > 0 ? new AesGcmPayloadCodec(encryptionKeys) : undefined;
const ledger = new Ledger(pool, { leaseTtlMs: env.LEASE_TTL_MS, crypto });
let graphs: Awaited<ReturnType<typeof loadGraphs>>;
try {
  graphs = await loadGraphs({
    modulePath: env.RUNLEDGER_GRAPHS,
    configPath: findLangGraphConfig(env.RUNLEDGER_CONFIG, process.cwd()),
    notice: (message) => log('warn', message),
  });
} catch (err) {
  console.error(`runledger worker: ${(err as Error).message}`);
  process.exit(2);
}

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
});
const worker = new RunledgerWorker({
  ledger,
  graphs: observability.graphs(graphs),
  workerId: env.RUNLEDGER_WORKER_ID,
  schema: env.DB_SCHEMA,
  queueConfig: { backend: env.QUEUE_BACKEND, redisUrl: env.REDIS_URL, databaseUrl: env.DATABASE_URL, schema: env.DB_SCHEMA, prefix: env.QUEUE_PREFIX },
  concurrency: env.WORKER_CONCURRENCY,
  defaultTimeoutMs: env.JOB_TIMEOUT_MS,
  drainGraceMs: env.DRAIN_GRACE_MS,
  sweepIntervalMs: env.SWEEP_INTERVAL_MS,
  crashAt: env.RUNLEDGER_TEST_CRASH_AT,
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
  console.error(`runledger worker: could not start: ${(err as Error).message}`);
  process.exit(1);
}
log('info', 'worker started', {
  encryptionAtRest: crypto !== undefined,
  backend: env.QUEUE_BACKEND,
  concurrency: env.WORKER_CONCURRENCY,
  leaseTtlMs: env.LEASE_TTL_MS,
  graphs: [...graphs.keys()],
});

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) {
    log('warn', `second ${signal}: exiting now`);
    process.exit(130);
  }
  stopping = true;
  log('info', `${signal}: draining`, { activeRuns: worker.activeRuns });
  const deadline = setTimeout(() => {
    log('error', `drain deadline of ${env.DRAIN_DEADLINE_MS} ms passed; exiting`);
    process.exit(1);
  }, env.DRAIN_DEADLINE_MS);
  deadline.unref();
  await worker.drain();
  await observability.close();
  await pool.end();
  log('info', 'worker stopped');
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
