// `npm run worker`: one worker process configured from the environment (DESIGN §11).
import { createPool, Ledger } from '@runledger/ledger';
import { loadGraphs } from '@runledger/runtime';
import { parseWorkerEnv } from './config';
import { createLogger } from './log';
import { RunledgerWorker } from './runledger-worker';

const parsed = parseWorkerEnv(process.env);
if (!parsed.ok) {
  console.error(`runledger worker: bad configuration: ${parsed.message}`);
  process.exit(2);
}
const env = parsed.env;
const log = createLogger({ service: 'worker', workerId: env.RUNLEDGER_WORKER_ID }, env.LOG_LEVEL);

const pool = createPool({
  connectionString: env.DATABASE_URL,
  schema: env.DB_SCHEMA,
  max: env.WORKER_CONCURRENCY * 2 + 4,
  onError: (e) => log('warn', 'idle PostgreSQL client error', { error: e.message }),
});
const ledger = new Ledger(pool, { leaseTtlMs: env.LEASE_TTL_MS });
let graphs: Awaited<ReturnType<typeof loadGraphs>>;
try {
  graphs = await loadGraphs(env.RUNLEDGER_GRAPHS);
} catch (err) {
  console.error(`runledger worker: ${(err as Error).message}`);
  process.exit(2);
}

const worker = new RunledgerWorker({
  ledger,
  graphs,
  workerId: env.RUNLEDGER_WORKER_ID,
  schema: env.DB_SCHEMA,
  queueConfig: { backend: env.QUEUE_BACKEND, redisUrl: env.REDIS_URL, databaseUrl: env.DATABASE_URL, schema: env.DB_SCHEMA, prefix: env.QUEUE_PREFIX },
  concurrency: env.WORKER_CONCURRENCY,
  defaultTimeoutMs: env.JOB_TIMEOUT_MS,
  drainGraceMs: env.DRAIN_GRACE_MS,
  sweepIntervalMs: env.SWEEP_INTERVAL_MS,
  crashAt: env.RUNLEDGER_TEST_CRASH_AT,
  log,
  onOutcome: (jobId, o) => log('debug', 'delivery done', { jobId, ...o }),
});

try {
  await worker.start();
} catch (err) {
  console.error(`runledger worker: could not start: ${(err as Error).message}`);
  process.exit(1);
}
log('info', 'worker started', { backend: env.QUEUE_BACKEND, concurrency: env.WORKER_CONCURRENCY, leaseTtlMs: env.LEASE_TTL_MS, graphs: [...graphs.keys()] });

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
  await pool.end();
  log('info', 'worker stopped');
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
