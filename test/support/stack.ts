import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Ledger } from '../../packages/ledger/src/index';
import { openQueue, type QueueConfig, sendAdmitted } from '../../packages/queue/src/index';
import { waitFor } from './db';

const root = path.resolve(import.meta.dirname, '../..');

/** Queue settings for one test file: its own Redis prefix, or BullMQ's PostgreSQL backend in its schema. */
export function queueConfigFor(backend: 'redis' | 'postgres', databaseUrl: string, schema: string, redisUrl: string | null, prefix = 't'): QueueConfig {
  if (backend === 'redis') {
    if (!redisUrl) throw new Error('the Redis queue backend was requested without Redis (REDIS_URL, or a server on :6379)');
    return { backend, redisUrl, prefix: `${prefix}${randomBytes(4).toString('hex')}` };
  }
  return { backend, databaseUrl, schema };
}

/** The environment a worker or producer process needs for a test stack. */
export function stackEnv(q: QueueConfig, databaseUrl: string, schema: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATABASE_URL: databaseUrl,
    DB_SCHEMA: schema,
    QUEUE_BACKEND: q.backend,
    ...(q.redisUrl ? { REDIS_URL: q.redisUrl } : { REDIS_URL: '' }),
    QUEUE_PREFIX: q.prefix ?? 'runledger',
    LOG_LEVEL: 'info',
    METRICS_PORT: '0',
    ...extra,
  };
}

export interface Proc {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
  kill(signal: NodeJS.Signals): void;
}

/** A spawned child with its stdout and stderr kept, in the order they came. */
export function keepOutput(child: ChildProcess): Proc {
  let out = '';
  child.stdout?.on('data', (d) => {
    out += d;
  });
  child.stderr?.on('data', (d) => {
    out += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => out, exited, kill: (s) => child.kill(s) };
}

/** Spawns `node [flags] --conditions=@runledger/source --import tsx <entry>` (a path from the repository root) as a real process, capturing its output. */
export function spawnProcess(entry: string, env: NodeJS.ProcessEnv, nodeFlags: string[] = []): Proc {
  const args = [...nodeFlags, '--conditions=@runledger/source', '--import', 'tsx', path.join(root, entry)];
  return keepOutput(spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] }));
}

export function spawnWorker(env: NodeJS.ProcessEnv, workerId: string, extra: Record<string, string> = {}): Proc {
  return spawnProcess('apps/worker/src/main.ts', { ...env, RUNLEDGER_WORKER_ID: workerId, ...extra });
}

/** Admits a job and delivers it the way the producer does (ledger commit, then queue add). */
export async function submit(ledger: Ledger, q: QueueConfig, req: Parameters<Ledger['admit']>[0]) {
  const { job } = await ledger.admit(req);
  const queue = openQueue(q);
  try {
    await sendAdmitted(queue, ledger, [job]);
  } finally {
    await queue.close();
  }
  return job;
}

/** Waits until the job reaches one of `statuses`; returns it. */
export function waitForStatus(ledger: Ledger, jobId: string, statuses: string[], timeoutMs = 30_000) {
  return waitFor(
    `job ${jobId} to reach ${statuses.join('|')}`,
    async () => {
      const j = await ledger.get(jobId);
      return statuses.includes(j.status) ? j : undefined;
    },
    timeoutMs,
  );
}

/** Waits until the job's timeline has an event matching `pred`. */
export function waitForEvent(
  ledger: Ledger,
  jobId: string,
  what: string,
  pred: (e: { type: string; detail: Record<string, unknown> }) => boolean,
  timeoutMs = 30_000,
) {
  return waitFor(`job ${jobId}: ${what}`, async () => (await ledger.events(jobId)).find(pred), timeoutMs);
}

/** Counts `node_entered` events per node over the whole timeline (all attempts). */
export async function nodeEntries(ledger: Ledger, jobId: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const e of await ledger.events(jobId)) if (e.type === 'node_entered') counts[String(e.detail.node)] = (counts[String(e.detail.node)] ?? 0) + 1;
  return counts;
}

/** The processes one test file starts: their output is printed when a test fails, and all are SIGKILLed after each test. */
export function processRegistry() {
  const procs: Proc[] = [];
  return {
    add(p: Proc): Proc {
      procs.push(p);
      return p;
    },
    async cleanup(ctx: { task: { result?: { state?: string } } }): Promise<void> {
      if (ctx.task.result?.state === 'fail') for (const p of procs) console.log(`--- ${p.child.pid}\n${p.output().slice(-4000)}`);
      for (const p of procs.splice(0)) {
        p.kill('SIGKILL');
        await p.exited;
      }
    },
  };
}
