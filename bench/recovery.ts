// Recovery after SIGKILL: real worker processes (lease TTL 5 s, the default; sweep every 1 s),
// one long echo job, the worker holding its lease SIGKILLed again and again; each sample is the
// time from the kill until another worker's `claimed` event (bench/lib/hand-over.ts). Held
// against the lease TTL (target: p95 ≤ TTL + 2 s) and against BullMQ's own stall recovery,
// measured at the same time on plain BullMQ workers with its defaults (bench/lib/bull-stall.ts):
// each of those takes 30–60 s, so the quick form takes 3 (at once) and --full 8.
import { benchSchema } from './bench-schema';
import { type BenchOptions, type Figure, holdAgainst, type Plot, size, summarizePercentile, withLimit } from './figures';
import { bullStallRecoveryTimes } from './lib/bull-stall';
import { handOverTimes } from './lib/hand-over';
import { benchQueueConfig } from './lib/processes';

/** The worker's default lease TTL, set explicitly so the target is computed from the value in force. */
const LEASE_TTL_MS = 5_000;
const LIMIT_MS = LEASE_TTL_MS + 2_000;
const RUNLEDGER = 'Runledger recovery after SIGKILL';
const BULLMQ = 'plain BullMQ stall recovery after SIGKILL';

export async function run(opts: BenchOptions): Promise<Figure[]> {
  if (!opts.redisUrl) throw new Error('recovery needs Redis (for the BullMQ comparison)');
  const kills = size(opts, { smoke: 2, quick: 20, full: 40 });
  const bullPairs = size(opts, { smoke: 1, quick: 3, full: 8 });
  const db = await benchSchema(opts, 'recovery');
  try {
    const q = benchQueueConfig('redis', opts.databaseUrl, db.schema, opts.redisUrl);
    // BullMQ's samples are waits on its timers: they run beside the Runledger kills (in two
    // rounds under --full, so no more than four pairs of processes run at once).
    const bull = (async () => {
      const times: number[] = [];
      for (let left = bullPairs; left > 0; left -= 4) times.push(...(await bullStallRecoveryTimes(opts.redisUrl!, Math.min(4, left))));
      return times;
    })();
    const runledger = await handOverTimes({
      db,
      queue: q,
      databaseUrl: opts.databaseUrl,
      signal: 'SIGKILL',
      rounds: kills,
      env: { LEASE_TTL_MS: String(LEASE_TTL_MS), SWEEP_INTERVAL_MS: '1000' },
      roundTimeoutMs: 60_000,
    });
    const bullTimes = await bull;
    const note = `${kills} kills, lease TTL ${LEASE_TTL_MS} ms, sweep 1 s; kill to another worker's claim`;
    const bullNote = `${bullTimes.length} kills${opts.full ? '' : ' (quick form: few, each waits 30–60 s)'}; BullMQ defaults: lockDuration 30 s, stalledInterval 30 s`;
    const bull50 = summarizePercentile(`${BULLMQ}, p50`, 'ms', bullTimes, 50, bullNote);
    const bull95 = summarizePercentile(`${BULLMQ}, p95`, 'ms', bullTimes, 95, bullNote);
    return [
      holdAgainst(summarizePercentile(`${RUNLEDGER}, p50`, 'ms', runledger, 50, note), bull50),
      withLimit(holdAgainst(summarizePercentile(`${RUNLEDGER}, p95`, 'ms', runledger, 95, note), bull95), LIMIT_MS, `≤ TTL + 2 s = ${LIMIT_MS} ms`),
      bull50,
      bull95,
    ];
  } finally {
    await db.drop();
  }
}

/** Every recovery time as a dot per mechanism, with the lease TTL and the target marked. */
export function plots(figures: Figure[]): Plot[] {
  const points = figures
    .filter((f) => f.name.endsWith('p50') && f.samples)
    .flatMap((f) => (f.samples ?? []).map((ms) => ({ mechanism: f.name.startsWith(RUNLEDGER) ? 'Runledger' : 'plain BullMQ', seconds: ms / 1000 })));
  if (points.length === 0) return [];
  const rules = [
    { seconds: LEASE_TTL_MS / 1000, label: 'lease TTL' },
    { seconds: LIMIT_MS / 1000, label: 'target p95' },
  ];
  return [
    {
      file: 'recovery-times',
      title: 'Recovery time after SIGKILL, every kill',
      spec: {
        title: {
          text: 'Recovery time after SIGKILL, every kill',
          subtitle: `dashed: the lease TTL (${LEASE_TTL_MS / 1000} s) and the p95 target (TTL + 2 s)`,
        },
        width: 560,
        height: 160,
        layer: [
          {
            data: { values: points },
            mark: { type: 'tick', thickness: 2 },
            encoding: {
              x: { field: 'seconds', type: 'quantitative', title: 'seconds from SIGKILL to the next claim' },
              y: { field: 'mechanism', type: 'nominal', title: null },
              color: { field: 'mechanism', type: 'nominal', legend: null },
            },
          },
          {
            data: { values: rules },
            mark: { type: 'rule', strokeDash: [4, 3], color: 'gray' },
            encoding: { x: { field: 'seconds', type: 'quantitative' } },
          },
        ],
      },
    },
    {
      file: 'recovery-histogram',
      title: 'Runledger recovery time after SIGKILL (lease TTL 5 s)',
      spec: {
        width: 480,
        height: 200,
        data: { values: points.filter((p) => p.mechanism === 'Runledger') },
        mark: 'bar',
        encoding: {
          x: { field: 'seconds', type: 'quantitative', bin: { step: 0.25 }, title: 'seconds from SIGKILL to the next claim' },
          y: { aggregate: 'count', type: 'quantitative', title: 'kills' },
        },
      },
    },
  ];
}
