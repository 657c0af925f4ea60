// Priority aging under load: one worker process at concurrency 1, a stream of priority-1 echo jobs
// (100 ms each) that never lets the queue run dry (at least 2 waiting, topped up every 50 ms: the
// high jobs are served well within the bound, so only the low ones age), and a priority-10 job
// admitted every second. Without aging a low job would wait as long as the stream lasts; with
// PRIORITY_AGING_MS = 5 s (checked every 500 ms) each waits about the bound. Each sample is one
// low job's wait, from its admission to its `claimed` event (database clock), and how many high
// jobs admitted after it ran first. Held against the bound: aging, plus one aging check, plus the
// runs ahead of it when raised (reported, no target: the 2 cores are shared).
import { openQueue, sendAdmitted } from '../packages/queue/src/index';
import { benchSchema } from './bench-schema';
import { type BenchOptions, type Figure, size, summarizePercentile } from './figures';
import { benchQueueConfig, startWorker, stop } from './lib/processes';

const AGING_MS = 5_000;
const SWEEP_MS = 500;
const HIGH_RUN_MS = 100;
const BACKLOG = 2;

export async function run(opts: BenchOptions): Promise<Figure[]> {
  const lows = size(opts, { smoke: 2, quick: 8, full: 30 });
  const db = await benchSchema(opts, 'aging');
  const q = benchQueueConfig(opts.redisUrl ? 'redis' : 'postgres', opts.databaseUrl, db.schema, opts.redisUrl);
  const worker = await startWorker(q, opts.databaseUrl, db.schema, 'aging-w1', {
    WORKER_CONCURRENCY: '1',
    LEASE_TTL_MS: '30000',
    SWEEP_INTERVAL_MS: String(SWEEP_MS),
    PRIORITY_AGING_MS: String(AGING_MS),
  });
  const queue = openQueue(q);
  try {
    const admit = async (n: number, priority: number, sleepMs: number) => {
      const jobs = (await Promise.all(Array.from({ length: n }, () => db.ledger.admit({ graph: 'echo', input: { steps: 1, sleepMs }, priority })))).map(
        (a) => a.job,
      );
      await sendAdmitted(queue, db.ledger, jobs);
      return jobs.map((j) => j.jobId);
    };
    const waiting = async (ids: string[]) =>
      Number((await db.pool.query(`SELECT count(*) FROM jobs WHERE job_id = ANY($1) AND status = 'accepted'`, [ids])).rows[0].count);
    const highs = await admit(BACKLOG, 1, HIGH_RUN_MS);
    const lowIds: string[] = [];
    let nextLow = Date.now();
    const end = Date.now() + 600_000;
    while (Date.now() < end) {
      if (lowIds.length < lows && Date.now() >= nextLow) {
        lowIds.push(...(await admit(1, 10, 0)));
        nextLow = Date.now() + 1_000;
      }
      if (lowIds.length === lows && (await waiting(lowIds)) === 0) break;
      if ((await waiting(highs)) < BACKLOG) highs.push(...(await admit(BACKLOG, 1, HIGH_RUN_MS)));
      await new Promise((r) => setTimeout(r, 50));
    }
    // The stream stops here; what is left of it is cancelled, not run.
    for (const id of highs) await db.ledger.cancel(id).catch(() => {});
    const rows = (
      await db.pool.query(
        `SELECT j.job_id, extract(epoch FROM (min(c.at) - j.accepted_at)) * 1000 AS wait_ms,
                (SELECT count(*) FROM jobs h JOIN job_events hc ON hc.job_id = h.job_id AND hc.type = 'claimed'
                  WHERE h.job_id = ANY($2) AND h.accepted_at > j.accepted_at AND hc.at < min(c.at))::int AS passed_by
           FROM jobs j JOIN job_events c ON c.job_id = j.job_id AND c.type = 'claimed'
          WHERE j.job_id = ANY($1) GROUP BY j.job_id, j.accepted_at`,
        [lowIds, highs],
      )
    ).rows as Array<{ wait_ms: string; passed_by: number }>;
    if (rows.length < lows) throw new Error(`only ${rows.length} of ${lows} low-priority jobs ran during the stream`);
    const waits = rows.map((r) => Number(r.wait_ms));
    const passed = rows.map((r) => r.passed_by);
    const note = `${lows} priority-10 jobs, one a second, under a stream of priority-1 echo jobs of ${HIGH_RUN_MS} ms (≥ ${BACKLOG} waiting), 1 worker, concurrency 1; PRIORITY_AGING_MS ${AGING_MS}, sweep ${SWEEP_MS} ms; bound ≈ ${AGING_MS + SWEEP_MS} ms + the run in flight`;
    return [
      summarizePercentile('low-priority wait under a high-priority stream, worst', 'ms', waits, 100, note),
      summarizePercentile('low-priority wait under a high-priority stream, p50', 'ms', waits, 50, note),
      summarizePercentile('high jobs admitted after a low one that ran before it, most', 'jobs', passed, 100, note),
    ];
  } finally {
    await queue.close();
    await stop(worker);
    await db.drop();
  }
}
