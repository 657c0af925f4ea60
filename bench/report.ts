// The Markdown report of a benchmark run, and its charts: Vega-Lite specs compiled to Vega and
// rendered to SVG headlessly in Node (no browser, no canvas, no network).
import { writeFileSync } from 'node:fs';
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import type { Figure, Plot } from './figures';

const fmt = (x: number) => (Math.abs(x) >= 100 ? Math.round(x).toLocaleString('en-US') : x.toFixed(2));

/** Renders one chart to `<dir>/<date>-<file>.svg`; returns the file name. */
export async function renderPlot(dir: URL, date: string, plot: Plot): Promise<string> {
  const spec = { $schema: 'https://vega.github.io/schema/vega-lite/v6.json', title: plot.title, ...plot.spec } as TopLevelSpec;
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  const svg = await view.toSVG();
  view.finalize();
  const name = `${date}-${plot.file}.svg`;
  writeFileSync(new URL(name, dir), svg);
  return name;
}

function targetText(f: Figure): string {
  if (f.targetText) return f.targetText;
  return f.target === undefined ? '' : `≥ ${f.target}×`;
}

/** The report: machine, a summary of every figure with a target, then one table per module with its charts. */
export function markdown(
  date: string,
  machine: Record<string, string | number>,
  results: Record<string, Figure[]>,
  charts: Record<string, Array<{ title: string; file: string }>>,
): string {
  const lines = [`# Runledger benchmarks, ${date}`, ''];
  for (const [k, v] of Object.entries(machine)) lines.push(`- ${k}: ${v}`);
  lines.push(
    '',
    'Each figure is the median of its runs, with min–max over those runs; a percentile figure (p50, p95) is that percentile',
    'of its samples, with min–max over the samples. Ratios are of medians, measured in the same run.',
    'What the profiles showed, and how each figure is measured: [bench/README.md](../README.md).',
    '',
    '## Targets',
    '',
    '| module | figure | median | vs | ratio | target | met |',
    '|---|---|---:|---|---:|---:|---|',
  );
  for (const [module, figures] of Object.entries(results)) {
    for (const f of figures.filter((x) => x.met !== undefined)) {
      const ratio = f.ratio === undefined ? '' : `${f.ratio.toFixed(2)}×`;
      lines.push(`| ${module} | ${f.name} | ${fmt(f.median)} ${f.unit} | ${f.heldAgainst ?? ''} | ${ratio} | ${targetText(f)} | ${f.met ? 'yes' : '**no**'} |`);
    }
  }
  lines.push('');
  for (const [module, figures] of Object.entries(results)) {
    lines.push(
      `## ${module}`,
      '',
      '| figure | median | min–max | unit | runs | vs | ratio | target | met | note |',
      '|---|---:|---:|---|---:|---|---:|---:|---|---|',
    );
    for (const f of figures) {
      const ratio = f.ratio === undefined ? '' : `${f.ratio.toFixed(2)}×`;
      const met = f.met === undefined ? '' : f.met ? 'yes' : '**no**';
      lines.push(
        `| ${f.name} | ${fmt(f.median)} | ${fmt(f.min)}–${fmt(f.max)} | ${f.unit} | ${f.runs} | ${f.heldAgainst ?? ''} | ${ratio} | ${targetText(f)} | ${met} | ${f.note ?? ''} |`,
      );
    }
    for (const c of charts[module] ?? []) lines.push('', `![${c.title}](${c.file})`);
    lines.push('');
  }
  return lines.join('\n');
}

export { fmt };
