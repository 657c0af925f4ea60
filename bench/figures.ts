// What a benchmark module returns, and the measuring helpers every module shares.

/** One measured figure: the median of `runs` repeats with their spread, optionally held against a baseline. */
export interface Figure {
  name: string;
  /** The figure itself: the median of the repeats. */
  value: number;
  unit: string;
  median: number;
  min: number;
  max: number;
  runs: number;
  /** Name of the baseline figure this one is compared with (same run, same database). */
  heldAgainst?: string;
  /** median / baseline median. */
  ratio?: number;
  /** The ratio this figure should reach. */
  target?: number;
  met?: boolean;
  note?: string;
}

export interface BenchOptions {
  /** Longer measurements and more repeats (`npm run bench -- --full`). */
  full: boolean;
  databaseUrl: string;
  redisUrl: string | null;
}

/** A benchmark module: `bench/<name>.ts` exporting `run`. */
export interface BenchModule {
  run(opts: BenchOptions): Promise<Figure[]>;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** A figure from repeated samples (at least one). */
export function summarize(name: string, unit: string, samples: number[], note?: string): Figure {
  if (samples.length === 0) throw new Error(`no samples for ${name}`);
  const m = median(samples);
  return { name, value: m, unit, median: m, min: Math.min(...samples), max: Math.max(...samples), runs: samples.length, ...(note ? { note } : {}) };
}

/** `figure` held against `baseline` (ratio of medians), checked against `target` when given. */
export function holdAgainst(figure: Figure, baseline: Figure, target?: number): Figure {
  const ratio = figure.median / baseline.median;
  return { ...figure, heldAgainst: baseline.name, ratio, ...(target === undefined ? {} : { target, met: ratio >= target }) };
}

/**
 * Closed-loop throughput: `concurrency` loops each await `op` back to back for `durationMs`
 * (after a short warm-up that is not counted). Returns completed operations per second.
 */
export async function throughput(concurrency: number, durationMs: number, op: (n: number) => Promise<unknown>, warmupMs = 300): Promise<number> {
  let n = 0;
  let counted = 0;
  const from = Date.now() + warmupMs;
  const until = from + durationMs;
  const loop = async () => {
    for (let start = Date.now(); start < until; start = Date.now()) {
      await op(n++);
      // Counted: operations that started after the warm-up and finished inside the window.
      if (start >= from && Date.now() <= until) counted++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  return counted / (durationMs / 1000);
}
