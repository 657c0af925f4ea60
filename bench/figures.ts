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
  /** How the target reads in the report (`≥ 0.7×`, `≤ 1.1×`, `≤ 7,000 ms`). */
  targetText?: string;
  note?: string;
  /** The raw samples, kept in the JSON for plots (recovery times, for instance). */
  samples?: number[];
}

export interface BenchOptions {
  /** Longer measurements and more repeats (`npm run bench -- --full`). */
  full: boolean;
  /** Tiny sizes that only check a module works (`--smoke`); nothing is written. */
  smoke?: boolean;
  databaseUrl: string;
  redisUrl: string | null;
}

/** A chart of a module's figures: a Vega-Lite spec, rendered to `bench/results/<date>-<file>.svg`. */
export interface Plot {
  file: string;
  title: string;
  spec: Record<string, unknown>;
}

/** A benchmark module: `bench/<name>.ts` exporting `run`, and `plots` when it draws charts. */
export interface BenchModule {
  run(opts: BenchOptions): Promise<Figure[]>;
  plots?(figures: Figure[]): Plot[];
}

/** The size for the mode: `--smoke`, quick (the default) or `--full`. */
export function size<T>(opts: BenchOptions, sizes: { smoke: T; quick: T; full: T }): T {
  return opts.smoke ? sizes.smoke : opts.full ? sizes.full : sizes.quick;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** The p-th percentile (0–100) of the samples, linearly interpolated between ranks. */
export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  const rank = (p / 100) * (s.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return s[lo]! + (s[hi]! - s[lo]!) * (rank - lo);
}

/**
 * A percentile of one distribution (recovery times, for instance): the value is the percentile,
 * min–max the whole range of the samples, runs their count; the samples are kept for plots.
 */
export function summarizePercentile(name: string, unit: string, samples: number[], p: number, note?: string): Figure {
  if (samples.length === 0) throw new Error(`no samples for ${name}`);
  const v = percentile(samples, p);
  return { name, value: v, unit, median: v, min: Math.min(...samples), max: Math.max(...samples), runs: samples.length, samples, ...(note ? { note } : {}) };
}

/** `figure` checked against an absolute limit it must stay at or under (`≤ 7,000 ms`). */
export function withLimit(figure: Figure, limit: number, text: string): Figure {
  return { ...figure, targetText: text, met: figure.median <= limit };
}

/** A figure from repeated samples (at least one). */
export function summarize(name: string, unit: string, samples: number[], note?: string): Figure {
  if (samples.length === 0) throw new Error(`no samples for ${name}`);
  const m = median(samples);
  return { name, value: m, unit, median: m, min: Math.min(...samples), max: Math.max(...samples), runs: samples.length, ...(note ? { note } : {}) };
}

/**
 * `figure` held against `baseline` (ratio of medians), checked against `target` when given:
 * the ratio must reach it when higher is better (throughput), stay under it when lower is (time).
 */
export function holdAgainst(figure: Figure, baseline: Figure, target?: number, better: 'higher' | 'lower' = 'higher'): Figure {
  const ratio = figure.median / baseline.median;
  if (target === undefined) return { ...figure, heldAgainst: baseline.name, ratio };
  const met = better === 'higher' ? ratio >= target : ratio <= target;
  return { ...figure, heldAgainst: baseline.name, ratio, target, met, targetText: `${better === 'higher' ? '≥' : '≤'} ${target}×` };
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
