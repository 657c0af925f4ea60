// BullMQ's own recovery after SIGKILL, for comparison: two plain BullMQ worker processes
// (bench/procs/bull-plain-worker.ts) on one queue; the one that took the job is SIGKILLed, and
// the time runs until the other prints that it took the job again (after BullMQ's stall check
// found the lock gone). Several pairs run at once, each on its own queue prefix.
import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { type Proc, spawnScript, stop, waitForOutput } from './processes';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The first time `proc` printed that it took `jobId`, or undefined. */
function activeAt(proc: Proc, jobId: string): number | undefined {
  for (const line of proc.output().split('\n')) {
    if (!line.startsWith('{')) continue;
    const e = JSON.parse(line) as { active?: string; at?: number };
    if (e.active === jobId) return e.at;
  }
  return undefined;
}

/** One sample: milliseconds from the SIGKILL of the job's worker until the other worker took it. */
async function stallRecovery(redisUrl: string, timeoutMs: number): Promise<number> {
  const prefix = `benchstall${randomBytes(4).toString('hex')}`;
  const env = { ...process.env, REDIS_URL: redisUrl, QUEUE_PREFIX: prefix };
  const procs = [spawnScript('bench/procs/bull-plain-worker.ts', env), spawnScript('bench/procs/bull-plain-worker.ts', env)];
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const queue = new Queue('stall-probe', { connection, prefix });
  try {
    await Promise.all(procs.map((p) => waitForOutput(p, /^ready$/m, 'plain BullMQ worker')));
    const job = await queue.add('probe', {});
    const jobId = String(job.id);
    let holder: Proc | undefined;
    for (const end = Date.now() + 30_000; !holder; await sleep(20)) {
      holder = procs.find((p) => activeAt(p, jobId) !== undefined);
      if (Date.now() > end) throw new Error('no plain BullMQ worker took the probe job');
    }
    await sleep(Math.random() * 1_000);
    const other = procs.find((p) => p !== holder)!;
    const t0 = Date.now();
    holder.kill('SIGKILL');
    for (const end = t0 + timeoutMs; ; await sleep(50)) {
      const at = activeAt(other, jobId);
      if (at !== undefined) return at - t0;
      if (Date.now() > end) throw new Error(`BullMQ did not recover the job within ${timeoutMs} ms`);
    }
  } finally {
    await Promise.all(procs.map((p) => stop(p, 'SIGKILL')));
    await queue.obliterate({ force: true }).catch(() => {});
    await queue.close();
    connection.disconnect();
  }
}

/** `pairs` samples taken at once (independent pairs, so the stall checkers' phases are independent). */
export function bullStallRecoveryTimes(redisUrl: string, pairs: number, timeoutMs = 150_000): Promise<number[]> {
  return Promise.all(Array.from({ length: pairs }, () => stallRecovery(redisUrl, timeoutMs)));
}
