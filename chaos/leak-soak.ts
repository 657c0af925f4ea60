// `npm run soak`: slow leaks and one long run. A producer and two workers on the harness's own
// PostgreSQL and Redis take a steady mix of work for `--minutes`; every `--sample-s` the harness
// reads each process's RSS and open file descriptors (from /proc), Redis's memory and key count,
// and PostgreSQL's database size and ledger rows. Slopes per hour come from a least-squares fit
// over the samples after the warm-up. Beside the mix, one run of `--long-run-minutes` checkpoints
// every 30 s while PostgreSQL is restarted `--pg-restarts` times mid-step: it must complete once,
// every step entered once, on its first attempt.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { ChaosPostgres, ChaosRedis, scratchDir } from './infra';
import { type Sample, slopeTable } from './leak-stats';
import { Stack } from './stack';

const { values: args } = parseArgs({
  options: {
    minutes: { type: 'string', default: '60' },
    'long-run-minutes': { type: 'string', default: '30' },
    'pg-restarts': { type: 'string', default: '2' },
    rate: { type: 'string', default: '2' },
    'sample-s': { type: 'string', default: '30' },
    // The workers' RETENTION_DAYS (default 3 minutes), RETENTION_CHECKPOINTS, RETENTION_JOBS and interval.
    'retention-days': { type: 'string', default: String(3 / 1440) },
    'retention-checkpoints': { type: 'string', default: 'none' },
    'retention-jobs': { type: 'string', default: 'delete' },
    'retention-interval-s': { type: 'string', default: '60' },
    out: { type: 'string' },
  },
});
const minutes = Number(args.minutes);
const longRunMinutes = Number(args['long-run-minutes']);
const pgRestarts = Number(args['pg-restarts']);
const ratePerS = Number(args.rate);
const sampleMs = Number(args['sample-s']) * 1_000;
const retentionDays = Number(args['retention-days']);
const retentionIntervalMs = Number(args['retention-interval-s']) * 1_000;
for (const [name, v] of Object.entries({ minutes, longRunMinutes, pgRestarts, ratePerS, sampleMs, retentionDays, retentionIntervalMs })) {
  if (!Number.isFinite(v) || v < 0) throw new Error(`--${name}: expected a number ≥ 0, got ${v}`);
}
if (longRunMinutes > minutes) throw new Error('--long-run-minutes cannot exceed --minutes');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const STEP_MS = 30_000;

function procStats(pid: number | undefined): { rssMb: number; fds: number } | undefined {
  if (!pid) return undefined;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
    return { rssMb: rssKb / 1024, fds: readdirSync(`/proc/${pid}/fd`).length };
  } catch {
    return undefined;
  }
}

const root = scratchDir('runledger-soak-');
const pg = await ChaosPostgres.start(root);
const redis = await ChaosRedis.start();
const stack = await Stack.create(pg, redis, {
  schema: 'soak',
  leaseTtlMs: 15_000,
  sweepIntervalMs: 1_000,
  workerConcurrency: 8,
  logDir: path.join(root, 'logs'),
});
const cleanup = () => {
  stack.killNow();
  pg.killNow();
  redis.killNow();
};
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    cleanup();
    process.exit(130);
  });
}

// By default finished threads older than 3 minutes are pruned every minute (checkpoints and job
// rows with their effects and stream logs: RETENTION_JOBS=delete) and Bull Board keeps 500
// finished deliveries: jobs, checkpoints, stream rows and keys must stop growing once retention
// catches up with admission. Events leave by whole UTC days only, so within a run that does not
// span a day boundary plus the window they grow (decision 0005). Under checkpoints last or all every
// thread keeps its latest job, and each soak job is its own thread: jobs then grow.
const retention = {
  DELIVERY_KEEP_COMPLETED_COUNT: '500',
  RETENTION_DAYS: String(retentionDays),
  RETENTION_INTERVAL_MS: String(retentionIntervalMs),
  RETENTION_CHECKPOINTS: args['retention-checkpoints'],
  RETENTION_JOBS: args['retention-jobs'],
  JOB_TIMEOUT_MS: String((longRunMinutes + 10) * 60_000),
};
await stack.startProducer();
await stack.startWorker('w1', retention);
await stack.startWorker('w2', retention);
const redisClient = new Redis(redis.url, { maxRetriesPerRequest: 1, lazyConnect: true });
await redisClient.connect();

const started = Date.now();
const endAt = started + minutes * 60_000;
const samples: Sample[] = [];
let submitted = 0;
let refused = 0;

async function sample(): Promise<void> {
  const at = (Date.now() - started) / 60_000;
  const row: Sample = { minute: at, values: {} };
  const procs = { producer: stack.producer, w1: stack.workers.get('w1'), w2: stack.workers.get('w2') };
  for (const [name, p] of Object.entries(procs)) {
    const s = procStats(p?.child.pid);
    if (s) Object.assign(row.values, { [`${name} RSS MB`]: s.rssMb, [`${name} fds`]: s.fds });
  }
  try {
    const info = await redisClient.info('memory');
    row.values['redis used MB'] = Number(/used_memory:(\d+)/.exec(info)?.[1]) / 2 ** 20;
    row.values['redis keys'] = await redisClient.dbsize();
    const db = await stack.pool.query(
      'SELECT pg_database_size(current_database()) AS bytes, (SELECT count(*) FROM jobs) AS jobs, (SELECT count(*) FROM job_events) AS events, (SELECT count(*) FROM checkpoints) AS checkpoints, (SELECT count(*) FROM run_stream_events) AS stream, (SELECT count(*) FROM effects) AS effects',
    );
    const r = db.rows[0];
    Object.assign(row.values, {
      'pg MB': Number(r.bytes) / 2 ** 20,
      'ledger jobs': Number(r.jobs),
      'ledger events': Number(r.events),
      checkpoints: Number(r.checkpoints),
      'stream rows': Number(r.stream),
      effects: Number(r.effects),
    });
  } catch {
    // PostgreSQL is restarting: this sample has process figures only.
  }
  samples.push(row);
  console.log(
    `${at.toFixed(1)} min: ${Object.entries(row.values)
      .map(([k, v]) => `${k} ${Number(v.toFixed(1))}`)
      .join(', ')}`,
  );
}

async function submitMix(): Promise<void> {
  let i = 0;
  while (Date.now() < endAt - 60_000) {
    const kind = i % 5;
    const request =
      kind === 3
        ? { graph: 'vacation', input: { delays: { flight: 50, hotel: 50, car: 50 } } }
        : kind === 4
          ? { graph: 'chat', input: { messages: [{ role: 'user', content: `soak ${i}` }] } }
          : { graph: 'echo', input: { steps: 1 + (i % 3), sleepMs: 100 } };
    try {
      await stack.client.submit({ ...request, idempotencyKey: `soak-${i}` });
      submitted++;
    } catch {
      refused++;
    }
    i++;
    await sleep(1_000 / Math.max(ratePerS, 0.01));
  }
}

/** The long run: steps of 30 s; PostgreSQL restarts just after a step begins, so no checkpoint write is in flight. */
async function longRun(): Promise<string[]> {
  if (longRunMinutes === 0) return ['long run: skipped'];
  const steps = Math.max(1, Math.round((longRunMinutes * 60_000) / STEP_MS));
  const { jobId } = await stack.client.submit({ graph: 'echo', input: { steps, sleepMs: STEP_MS, traceNodes: true }, idempotencyKey: 'soak-long-run' });
  const restartSteps = Array.from({ length: pgRestarts }, (_, k) => Math.max(1, Math.floor(((k + 1) * steps) / (pgRestarts + 1))));
  const lines: string[] = [];
  for (const step of restartSteps) {
    for (;;) {
      const entered = await stack.ledger.events(jobId).then(
        (es) => es.filter((e) => e.type === 'node_entered').length,
        () => 0,
      );
      if (entered >= step) break;
      await sleep(1_000);
    }
    await sleep(2_000);
    const t = Date.now();
    await pg.restart(1_000);
    lines.push(`PostgreSQL restarted during step ${step} of ${steps} (down ${Date.now() - t} ms)`);
  }
  const job = await stack.client.wait(jobId, { timeoutMs: (longRunMinutes + 10) * 60_000 });
  const events = await stack.ledger.events(jobId);
  const entered = events.filter((e) => e.type === 'node_entered').map((e) => String(e.detail.node));
  const twice = entered.filter((n, k) => entered.indexOf(n) !== k);
  lines.push(
    `long run ${jobId}: ${job.status} after ${(((job.completedAt ? new Date(job.completedAt).getTime() : Date.now()) - new Date(job.acceptedAt).getTime()) / 60_000).toFixed(1)} min, attempt ${job.attempt}, ${entered.length} of ${steps} steps entered, entered twice: ${twice.length ? twice.join(',') : 'none'}`,
  );
  lines.push(`long run verdict: ${job.status === 'completed' && job.attempt === 1 && entered.length === steps && twice.length === 0 ? 'PASS' : 'FAIL'}`);
  return lines;
}

try {
  await sample();
  const sampler = setInterval(() => void sample(), sampleMs);
  const [, longRunLines] = await Promise.all([submitMix(), longRun()]);
  while (Date.now() < endAt) await sleep(1_000);
  clearInterval(sampler);
  await sample();
  const report = [
    `npm run soak -- --minutes ${minutes} --long-run-minutes ${longRunMinutes} --pg-restarts ${pgRestarts} --rate ${ratePerS} --retention-days ${retentionDays} --retention-checkpoints ${args['retention-checkpoints']} --retention-jobs ${args['retention-jobs']} --retention-interval-s ${retentionIntervalMs / 1000}`,
    `${new Date(started).toISOString()} → ${new Date().toISOString()}, ${submitted} jobs submitted, ${refused} refused, load average at the end ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
    ...longRunLines,
    '',
    ...slopeTable(samples, 0.2),
  ].join('\n');
  console.log(`\n${report}`);
  if (args.out) writeFileSync(args.out, `${report}\n`);
} finally {
  await redisClient.quit().catch(() => {});
  await stack.close();
  await pg.remove();
  await redis.stop();
}
