// The kill chain behind the recovery and hand-over figures: one long echo job, two live worker
// processes; signal the one holding the job's lease, and time from the signal until another
// worker's `claimed` event for the job (the event's time is the claim transaction's, by the
// database clock of this same machine). A replacement worker starts right after each signal,
// so the next round again has the holder and one more.
import type { QueueConfig } from '../../packages/queue/src/index';
import type { BenchSchema } from '../bench-schema';
import { admitAndDeliver } from './fleet';
import { type Proc, startWorker, stop } from './processes';
import { closeQueue, emptyQueue, readyQueue } from './queues';

/** Steps of the long job, and how long each sleeps: a drain waits for the step in flight. */
export const STEP_MS = 500;
const STEPS = 1_000;
const POLL_MS = 20;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  for (const end = Date.now() + timeoutMs; ; await sleep(POLL_MS)) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
  }
}

export interface ChainOptions {
  db: BenchSchema;
  queue: QueueConfig;
  databaseUrl: string;
  signal: 'SIGKILL' | 'SIGTERM';
  rounds: number;
  /** Environment of every worker (LEASE_TTL_MS, …). */
  env?: Record<string, string>;
  /** Longest one round may take before the chain gives up. */
  roundTimeoutMs: number;
}

/** Milliseconds from each signal to the next worker's claim, one per round. */
export async function handOverTimes(o: ChainOptions): Promise<number[]> {
  const { ledger } = o.db;
  const workers = new Map<string, Proc>();
  let spawned = 0;
  const spawn = async () => {
    const id = `${o.signal.toLowerCase()}-w${spawned++}`;
    workers.set(id, await startWorker(o.queue, o.databaseUrl, o.db.schema, id, o.env));
  };
  const queue = await readyQueue(o.queue);
  const samples: number[] = [];
  let jobId: string | undefined;
  try {
    await Promise.all([spawn(), spawn()]);
    [jobId] = await admitAndDeliver(ledger, queue, [{ graph: 'echo', input: { steps: STEPS, sleepMs: STEP_MS }, maxAttempts: 1_000 }]);
    const id = jobId!;
    let replacement: Promise<void> = Promise.resolve();
    for (let round = 0; round < o.rounds; round++) {
      // The job runs under a live worker, and another one is up.
      const holder = await until(
        'the job to run',
        async () => {
          const job = await ledger.get(id);
          return job.status === 'running' && job.leaseOwner && workers.has(job.leaseOwner) ? job.leaseOwner : undefined;
        },
        o.roundTimeoutMs,
      );
      await replacement;
      // A random phase against heartbeats, sweeps and step boundaries.
      await sleep(300 + Math.random() * 1_000);
      const proc = workers.get(holder)!;
      workers.delete(holder);
      const seen = Math.max(0, ...(await ledger.events(id)).map((e) => e.eventId));
      const t0 = Date.now();
      proc.kill(o.signal);
      replacement = spawn();
      const claimed = await until(
        `another worker to claim the job (round ${round + 1})`,
        async () => (await ledger.events(id)).find((e) => e.type === 'claimed' && e.workerId !== holder && e.eventId > seen),
        o.roundTimeoutMs,
      );
      samples.push(claimed.at.getTime() - t0);
      await proc.exited;
    }
    await replacement;
    return samples;
  } finally {
    if (jobId) await ledger.cancel(jobId).catch(() => {});
    await Promise.all([...workers.values()].map((p) => stop(p)));
    await closeQueue(queue);
    await emptyQueue(o.queue);
  }
}
