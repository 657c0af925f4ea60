import type { DashboardReads, TimeWindow } from '@runledger/ledger';

/** The events charted as "jobs entering each status" (`claimed` is the move to starting/running). */
export const TRANSITION_EVENTS = ['accepted', 'claimed', 'completed', 'failed', 'recovery_required', 'manual_reconcile', 'interrupted', 'cancelled'] as const;

/** The last `hours` hours (1 to 720) cut into about 48 buckets of whole minutes. */
export function chartWindow(hours: number, now = new Date()): TimeWindow {
  const bucketSeconds = Math.max(60, Math.ceil((hours * 3600) / 48 / 60) * 60);
  // Align the origin to the bucket width so a refresh keeps the same bucket edges.
  const end = Math.ceil(now.getTime() / 1000 / bucketSeconds) * bucketSeconds * 1000;
  const count = Math.ceil((hours * 3600) / bucketSeconds);
  return { from: new Date(end - count * bucketSeconds * 1000), to: new Date(end), bucketSeconds };
}

function labels(w: TimeWindow): string[] {
  const out: string[] = [];
  for (let t = w.from.getTime(); t < w.to.getTime(); t += w.bucketSeconds * 1000) out.push(new Date(t).toISOString());
  return out;
}

const slot = (w: TimeWindow, at: Date) => Math.floor((at.getTime() - w.from.getTime()) / (w.bucketSeconds * 1000));

/** `{ labels, series: [{ name, data }] }` of transitions per bucket, zero-filled, for the chart. */
export async function transitionsChart(reads: DashboardReads, w: TimeWindow) {
  const l = labels(w);
  const series = TRANSITION_EVENTS.map((name) => ({ name, data: l.map(() => 0) }));
  for (const b of await reads.eventBuckets(w, TRANSITION_EVENTS)) {
    const s = series.find((x) => x.name === b.type);
    const i = slot(w, b.bucket);
    if (s && i >= 0 && i < l.length) s.data[i] = b.count;
  }
  return { labels: l, bucketSeconds: w.bucketSeconds, series };
}

/** `{ labels, recoveries, recovered, p50, p95, max }` per bucket (null where none recovered). */
export async function recoveriesChart(reads: DashboardReads, w: TimeWindow) {
  const l = labels(w);
  const col = <T>(fill: T) => l.map(() => fill);
  const out = {
    labels: l,
    bucketSeconds: w.bucketSeconds,
    recoveries: col(0),
    recovered: col(0),
    p50: col<number | null>(null),
    p95: col<number | null>(null),
    max: col<number | null>(null),
  };
  for (const b of await reads.recoveryBuckets(w)) {
    const i = slot(w, b.bucket);
    if (i < 0 || i >= l.length) continue;
    out.recoveries[i] = b.recoveries;
    out.recovered[i] = b.recovered;
    out.p50[i] = b.p50Ms;
    out.p95[i] = b.p95Ms;
    out.max[i] = b.maxMs;
  }
  return out;
}
