// The soak's arithmetic: a least-squares slope per hour for each series, over the samples after
// the warm-up, beside the series' mean, so "flat" is a number (the slope as a share of the mean).

export interface Sample {
  /** Minutes since the soak began. */
  minute: number;
  values: Record<string, number>;
}

/** Least-squares slope of y over x (units of y per unit of x); NaN with fewer than two points. */
export function slope(points: ReadonlyArray<readonly [number, number]>): number {
  const n = points.length;
  if (n < 2) return Number.NaN;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den === 0 ? Number.NaN : num / den;
}

/** One line per series: first, last, mean after the warm-up, slope per hour and that slope as % of the mean. */
export function slopeTable(samples: readonly Sample[], warmupShare: number): string[] {
  if (samples.length === 0) return ['no samples'];
  const last = samples.at(-1)!.minute;
  const kept = samples.filter((s) => s.minute >= last * warmupShare);
  const names = [...new Set(samples.flatMap((s) => Object.keys(s.values)))];
  const lines = [
    `after the first ${Math.round(warmupShare * 100)} % (${kept.length} of ${samples.length} samples):`,
    '| series | first | last | mean | slope per hour | slope / mean |',
    '|---|---:|---:|---:|---:|---:|',
  ];
  const fmt = (v: number) => (Number.isFinite(v) ? (Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(1)) : '–');
  for (const name of names) {
    const points = kept.flatMap((s) => (name in s.values ? [[s.minute / 60, s.values[name]!] as const] : []));
    if (points.length === 0) continue;
    const mean = points.reduce((s, [, y]) => s + y, 0) / points.length;
    const perHour = slope(points);
    const first = samples.find((s) => name in s.values)!.values[name]!;
    lines.push(
      `| ${name} | ${fmt(first)} | ${fmt(points.at(-1)![1])} | ${fmt(mean)} | ${fmt(perHour)} | ${mean === 0 ? '–' : `${((perHour / mean) * 100).toFixed(1)} %`} |`,
    );
  }
  return lines;
}
