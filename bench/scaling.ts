// Throughput of echo (2 steps) end to end with 1, 2 and 4 worker processes, each size held
// against 1 process. The jobs in flight stay 16 in total (16, 2×8, 4×4): on 2 cores this asks
// whether more processes (more event loops) help, not whether more concurrency does, and it
// keeps 4 processes' pools inside the server's connection limit next to other users.
import { benchSchema } from './bench-schema';
import { type BenchOptions, type Figure, holdAgainst, type Plot, size, summarize } from './figures';
import { Fleet } from './lib/fleet';
import { benchQueueConfig } from './lib/processes';

const TOTAL_CONCURRENCY = 16;
const SIZES = [1, 2, 4];

export async function run(opts: BenchOptions): Promise<Figure[]> {
  const runs = size(opts, { smoke: 48, quick: 400, full: 2_000 });
  const repeats = size(opts, { smoke: 1, quick: 3, full: 5 });
  const db = await benchSchema(opts, 'scaling');
  const figures: Figure[] = [];
  try {
    const q = benchQueueConfig(opts.redisUrl ? 'redis' : 'postgres', opts.databaseUrl, db.schema, opts.redisUrl);
    for (const processes of SIZES) {
      const per = TOTAL_CONCURRENCY / processes;
      const fleet = await Fleet.start(db, q, opts.databaseUrl, processes, per);
      try {
        await fleet.batch(TOTAL_CONCURRENCY * 4, 'echo', () => ({ steps: 2 })); // warm-up
        const samples: number[] = [];
        for (let r = 0; r < repeats; r++) samples.push(await fleet.batch(runs, 'echo', () => ({ steps: 2 })));
        const figure = summarize(`${processes} worker process${processes > 1 ? 'es' : ''} × c=${per}`, 'runs/s', samples, `${runs} jobs per repeat`);
        figures.push(figures[0] ? holdAgainst(figure, figures[0]) : figure);
      } finally {
        await fleet.stop();
      }
    }
    return figures;
  } finally {
    await db.drop();
  }
}

/** Runs per second against worker processes, the median with its min–max. */
export function plots(figures: Figure[]): Plot[] {
  const values = figures.map((f) => ({ processes: Number.parseInt(f.name, 10), median: f.median, min: f.min, max: f.max }));
  if (values.some((v) => Number.isNaN(v.processes))) return [];
  const x = { field: 'processes', type: 'quantitative', title: 'worker processes (16 jobs in flight in total)', axis: { values: SIZES } };
  return [
    {
      file: 'throughput-vs-workers',
      title: 'echo (2 steps) end to end: throughput against worker processes',
      spec: {
        width: 420,
        height: 240,
        data: { values },
        layer: [
          { mark: { type: 'line', point: true }, encoding: { x, y: { field: 'median', type: 'quantitative', title: 'runs/s (median, min–max)' } } },
          { mark: 'rule', encoding: { x, y: { field: 'min', type: 'quantitative' }, y2: { field: 'max' } } },
        ],
      },
    },
  ];
}
