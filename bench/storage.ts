// PostgreSQL rows and bytes per job, per table (jobs, job_events, effects and LangGraph's
// checkpoints, checkpoint_blobs, checkpoint_writes), for `echo` (2 steps) and `vacation` jobs run
// end to end by one worker process. Each batch is measured as the growth of row counts and of
// pg_total_relation_size (heap, TOAST, indexes; storageStats in packages/ledger) divided by its
// jobs. Reported, no target.
import { storageStats, type TableStorage } from '../packages/ledger/src/index';
import { benchSchema } from './bench-schema';
import { type BenchOptions, type Figure, size, summarize } from './figures';
import { Fleet } from './lib/fleet';
import { benchQueueConfig } from './lib/processes';

const GRAPHS: Record<string, unknown> = { echo: { steps: 2 }, vacation: {} };

export async function run(opts: BenchOptions): Promise<Figure[]> {
  const jobs = size(opts, { smoke: 32, quick: 300, full: 1_000 });
  const batches = size(opts, { smoke: 1, quick: 2, full: 3 });
  const figures: Figure[] = [];
  for (const [graph, input] of Object.entries(GRAPHS)) {
    const db = await benchSchema(opts, `storage_${graph}`);
    try {
      const q = benchQueueConfig(opts.redisUrl ? 'redis' : 'postgres', opts.databaseUrl, db.schema, opts.redisUrl);
      const fleet = await Fleet.start(db, q, opts.databaseUrl, 1, 16);
      const perTable = new Map<string, { rows: number[]; bytes: number[] }>();
      const totals: number[] = [];
      try {
        for (let b = 0; b < batches; b++) {
          const before = await storageStats(db.pool);
          await fleet.batch(jobs, graph, () => input);
          const after = await storageStats(db.pool);
          let total = 0;
          for (const t of after) {
            const was = before.find((x) => x.table === t.table) as TableStorage;
            const s = perTable.get(t.table) ?? { rows: [], bytes: [] };
            s.rows.push((t.rows - was.rows) / jobs);
            s.bytes.push((t.bytes - was.bytes) / jobs);
            total += (t.bytes - was.bytes) / jobs;
            perTable.set(t.table, s);
          }
          totals.push(total);
        }
      } finally {
        await fleet.stop();
      }
      for (const [table, s] of perTable) {
        const rows = summarize('rows', 'rows/job', s.rows);
        figures.push(summarize(`${graph}: ${table}`, 'bytes/job', s.bytes, `${rows.median.toFixed(2)} rows/job`));
      }
      figures.push(summarize(`${graph}: all six tables`, 'bytes/job', totals, `${batches} batches of ${jobs} jobs`));
    } finally {
      await db.drop();
    }
  }
  return figures;
}
