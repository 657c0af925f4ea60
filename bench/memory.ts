// Resident memory (VmRSS from /proc/<pid>/status) of one worker process at concurrency 16 while it
// runs `vacation` jobs (a scripted agent booking flight, hotel and car in parallel through the
// effects ledger; each booking waits 100–150 ms, so 16 runs stay in flight). Sampled every 200 ms:
// idle after start, then through each batch of jobs. Reported, no target.
import { readFileSync } from 'node:fs';
import { benchSchema } from './bench-schema';
import { type BenchOptions, type Figure, size, summarize } from './figures';
import { Fleet } from './lib/fleet';
import { benchQueueConfig } from './lib/processes';

const CONCURRENCY = 16;
const SAMPLE_MS = 200;
const INPUT = { delays: { flight: 100, hotel: 150, car: 120 } };

/** VmRSS of `pid` in MiB. */
function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+)\s+kB/m);
  if (!line) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(line[1]) / 1024;
}

/** Samples `pid`'s RSS every 200 ms while `work` runs. */
async function sampleDuring(pid: number, work: Promise<unknown>): Promise<number[]> {
  const samples = [rssMiB(pid)];
  const timer = setInterval(() => samples.push(rssMiB(pid)), SAMPLE_MS);
  try {
    await work;
  } finally {
    clearInterval(timer);
  }
  return samples;
}

export async function run(opts: BenchOptions): Promise<Figure[]> {
  const jobs = size(opts, { smoke: 32, quick: 300, full: 1_500 });
  const batches = size(opts, { smoke: 1, quick: 3, full: 5 });
  const db = await benchSchema(opts, 'memory');
  try {
    const q = benchQueueConfig(opts.redisUrl ? 'redis' : 'postgres', opts.databaseUrl, db.schema, opts.redisUrl);
    const fleet = await Fleet.start(db, q, opts.databaseUrl, 1, CONCURRENCY);
    try {
      const pid = fleet.procs[0]!.child.pid!;
      const idle = await sampleDuring(pid, new Promise((r) => setTimeout(r, 1_000)));
      const running: number[] = [];
      const peaks: number[] = [];
      const rates: number[] = [];
      for (let b = 0; b < batches; b++) {
        let rate = 0;
        const samples = await sampleDuring(
          pid,
          fleet
            .batch(jobs, 'vacation', () => INPUT)
            .then((r) => {
              rate = r;
            }),
        );
        running.push(...samples);
        peaks.push(Math.max(...samples));
        rates.push(rate);
      }
      const every = `sampled every ${SAMPLE_MS} ms`;
      return [
        summarize('worker RSS, idle after start', 'MiB', idle, every),
        summarize(`worker RSS running vacation jobs, c=${CONCURRENCY}`, 'MiB', running, `${every} over ${batches} batches of ${jobs} jobs`),
        summarize(`worker peak RSS per batch, c=${CONCURRENCY}`, 'MiB', peaks, `${batches} batches of ${jobs} jobs`),
        summarize(`vacation jobs end to end, c=${CONCURRENCY} (while measured)`, 'runs/s', rates, 'bookings wait 100–150 ms each'),
      ];
    } finally {
      await fleet.stop();
    }
  } finally {
    await db.drop();
  }
}
