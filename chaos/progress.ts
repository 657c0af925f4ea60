// In-flight, completed and recovery over a chaos run: sampled from the ledger every few seconds
// while it runs, and drawn as an SVG (Vega-Lite, rendered headlessly) beside its result.
import { writeFileSync } from 'node:fs';
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import { DashboardReads, type Ledger, TERMINAL_STATUSES } from '../packages/ledger/src/index';
import type { Stack } from './stack';

export interface ProgressSample {
  /** Seconds since the run started. */
  t: number;
  /** Jobs admitted and neither terminal nor parked (interrupted). */
  inFlight: number;
  completed: number;
  /** Jobs that went to recovery_required (a lease expired, a drain released it) in the interval before `t`. */
  recoveries: number;
}

const ENDED = new Set<string>([...TERMINAL_STATUSES, 'interrupted']);

export class ProgressSampler {
  readonly samples: ProgressSample[] = [];
  private timer: NodeJS.Timeout | undefined;
  private last = new Date();
  private readonly reads: DashboardReads;

  constructor(
    private readonly stack: Stack,
    private readonly intervalMs = 10_000,
  ) {
    this.reads = new DashboardReads(stack.pool);
  }

  start(startedAt: number): void {
    this.last = new Date(startedAt);
    this.timer = setInterval(() => void this.sample(startedAt).catch(() => {}), this.intervalMs);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async sample(startedAt: number): Promise<void> {
    const ledger: Ledger = this.stack.ledger;
    const now = new Date();
    const [counts, buckets] = await Promise.all([
      ledger.countByStatus(),
      this.reads.eventBuckets({ from: this.last, to: now, bucketSeconds: 3_600 }, ['recovery_required']),
    ]);
    this.last = now;
    const inFlight = Object.entries(counts).reduce((n, [status, c]) => n + (ENDED.has(status) ? 0 : c), 0);
    const recoveries = buckets.reduce((n, b) => n + b.count, 0);
    this.samples.push({ t: Math.round((now.getTime() - startedAt) / 1000), inFlight, completed: counts.completed ?? 0, recoveries });
  }
}

/** Writes the samples as an SVG chart to `file`. */
export async function renderProgress(file: string, title: string, samples: ProgressSample[]): Promise<void> {
  const values = samples.flatMap((s) => [
    { t: s.t, series: 'in flight', jobs: s.inFlight },
    { t: s.t, series: 'completed', jobs: s.completed },
    { t: s.t, series: 'recoveries (per sample)', jobs: s.recoveries },
  ]);
  const spec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title,
    width: 720,
    height: 300,
    data: { values },
    mark: { type: 'line', interpolate: 'step-after' },
    encoding: {
      x: { field: 't', type: 'quantitative', title: 'seconds since start' },
      y: { field: 'jobs', type: 'quantitative', title: 'jobs', scale: { type: 'symlog' } },
      color: { field: 'series', type: 'nominal', title: null },
    },
  } as TopLevelSpec;
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  writeFileSync(file, await view.toSVG());
  view.finalize();
}
