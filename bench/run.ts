// Runs the benchmark modules and writes bench/results/<date>.json, .md and the charts (.svg).
//   npm run bench              quick form (under ten minutes on 2 cores)
//   npm run bench -- --full    longer measurements, more repeats
//   npm run bench -- admit     only the named modules (the day's other figures are kept)
//   npm run bench -- --smoke   tiny sizes, to check the modules work; writes nothing
//   npm run bench -- --scale   only the scale benches (bench/scale-migration.ts, bench/scale.ts: 0, 1M, 10M jobs; hours)
//   npm run bench -- --profile spawned workers and helpers write V8 CPU profiles to bench/results/profiles/
// DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres); REDIS_URL, else :6379 when open.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { isPortOpen } from '../packages/ledger/src/index';
import type { BenchModule, BenchOptions, Figure } from './figures';
import { profiling } from './lib/processes';
import { fmt, markdown, renderPlot } from './report';

/** Every benchmark module. Adding one is one line: `name: () => import('./name')`. */
const MODULES: Record<string, () => Promise<BenchModule>> = {
  admit: () => import('./admit'),
  'admit-cost': () => import('./admit-cost'),
  'http-admission': () => import('./http-admission'),
  'bulk-admission': () => import('./bulk-admission'),
  'e2e-echo': () => import('./e2e-echo'),
  'e2e-http': () => import('./e2e-http'),
  saver: () => import('./saver'),
  recovery: () => import('./recovery'),
  handover: () => import('./handover'),
  scaling: () => import('./scaling'),
  'model-bound': () => import('./model-bound'),
  memory: () => import('./memory'),
  storage: () => import('./storage'),
  'queue-backends': () => import('./queue-backends'),
  'round-trips': () => import('./round-trips'),
  'stream-log': () => import('./stream-log'),
  'stream-e2e': () => import('./stream-e2e'),
  'stream-cost': () => import('./stream-cost'),
  'redis-retention': () => import('./redis-retention'),
  'scale-migration': () => import('./scale-migration'),
  scale: () => import('./scale'),
  'cli-startup': () => import('./cli-startup'),
  'priority-aging': () => import('./priority-aging'),
  'store-search': () => import('./store-search'),
};
/** Modules left out of a run that names none: too long for the default run. */
const ON_REQUEST = new Set(['scale-migration', 'scale']);

const load = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' / ');

async function serverVersion(databaseUrl: string): Promise<string> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const r = await client.query("SELECT current_setting('server_version') AS v, current_setting('synchronous_commit') AS sc");
    return `${r.rows[0].v} (synchronous_commit=${r.rows[0].sc})`;
  } finally {
    await client.end();
  }
}

async function main() {
  const args = process.argv.slice(2);
  const full = args.includes('--full');
  const smoke = args.includes('--smoke');
  const only = args.includes('--scale') ? ['scale-migration', 'scale'] : args.filter((a) => !a.startsWith('--'));
  const unknown = only.filter((n) => !MODULES[n]);
  if (unknown.length) {
    console.error(`[bench] unknown benchmark ${unknown.join(', ')}; known: ${Object.keys(MODULES).join(', ')}`);
    process.exitCode = 2;
    return;
  }
  const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const redisUrl = process.env.REDIS_URL ?? ((await isPortOpen(6379)) ? 'redis://127.0.0.1:6379' : null);
  const opts: BenchOptions = { full, smoke, databaseUrl, redisUrl };
  const dir = new URL('./results/', import.meta.url);
  if (args.includes('--profile')) {
    profiling.dir = fileURLToPath(new URL('./profiles/', dir));
    mkdirSync(profiling.dir, { recursive: true });
  }

  const date = new Date().toISOString().slice(0, 10);
  const machine = {
    cores: os.cpus().length,
    cpu: os.cpus()[0]?.model ?? 'unknown',
    memory: `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`,
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    postgres: await serverVersion(databaseUrl),
    redis: redisUrl ? 'available' : 'none',
    mode: full ? 'full' : smoke ? 'smoke' : 'quick',
    'load average 1/5/15 min at start': load(),
  };
  const results: Record<string, Figure[]> = {};
  const started = Date.now();
  for (const name of only.length ? only : Object.keys(MODULES).filter((n) => !ON_REQUEST.has(n))) {
    const t = Date.now();
    console.log(`[bench] ${name} …`);
    results[name] = await (await MODULES[name]!()).run(opts);
    for (const f of results[name]) {
      const vs = f.ratio === undefined ? '' : `  (${f.ratio.toFixed(2)}× ${f.heldAgainst})`;
      const target = f.met === undefined ? '' : `  target ${f.targetText ?? `≥ ${f.target}×`}: ${f.met ? 'met' : 'NOT met'}`;
      console.log(`  ${f.name}: ${fmt(f.median)} ${f.unit} [${fmt(f.min)}–${fmt(f.max)}, ${f.runs} runs]${vs}${target}`);
    }
    console.log(`[bench] ${name} took ${((Date.now() - t) / 1000).toFixed(0)} s`);
  }
  if (smoke) {
    console.log('[bench] smoke run: nothing written');
    return;
  }
  const machineAtEnd = { ...machine, 'load average 1/5/15 min at end': load(), 'total time': `${Math.round((Date.now() - started) / 1000)} s` };
  mkdirSync(dir, { recursive: true });
  const jsonFile = new URL(`${date}.json`, dir);
  // A run of some modules keeps the day's figures of the others.
  const earlier = only.length && existsSync(jsonFile) ? (JSON.parse(readFileSync(jsonFile, 'utf8')).results as Record<string, Figure[]>) : {};
  const merged = { ...earlier, ...results };
  const out = { date, machine: machineAtEnd, totalSeconds: Math.round((Date.now() - started) / 1000), results: merged };
  writeFileSync(jsonFile, `${JSON.stringify(out, null, 2)}\n`);
  const charts: Record<string, Array<{ title: string; file: string }>> = {};
  for (const [name, figures] of Object.entries(merged)) {
    const plots = MODULES[name] ? ((await MODULES[name]()).plots?.(figures) ?? []) : [];
    charts[name] = [];
    for (const p of plots) {
      try {
        charts[name].push({ title: p.title, file: await renderPlot(dir, date, p) });
      } catch (err) {
        console.error(`[bench] could not draw ${p.file}: ${(err as Error).message}`);
      }
    }
  }
  writeFileSync(new URL(`${date}.md`, dir), markdown(date, machineAtEnd, merged, charts));
  console.log(`[bench] wrote bench/results/${date}.json, .md and ${Object.values(charts).flat().length} charts`);
}

// Exits when done even if a client library left a connection open.
main().then(
  () => process.exit(),
  (err) => {
    console.error(`[bench] ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  },
);
