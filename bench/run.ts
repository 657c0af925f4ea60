// Runs the benchmark modules and writes bench/results/<date>.json and .md.
//   npm run bench              quick form (about a minute or two on 2 cores)
//   npm run bench -- --full    longer measurements, more repeats
//   npm run bench -- admit     only the named modules
// DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres); REDIS_URL, else :6379 when open.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import pg from 'pg';
import { isPortOpen } from '../packages/ledger/src/index';
import type { BenchModule, BenchOptions, Figure } from './figures';

/** Every benchmark module. Adding one is one line: `name: () => import('./name')`. */
const MODULES: Record<string, () => Promise<BenchModule>> = {
  admit: () => import('./admit'),
  'admit-cost': () => import('./admit-cost'),
};

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

const fmt = (x: number) => (x >= 100 ? Math.round(x).toLocaleString('en-US') : x.toFixed(2));

function markdown(date: string, machine: Record<string, string | number>, results: Record<string, Figure[]>): string {
  const lines = [`# Runledger benchmarks, ${date}`, ''];
  for (const [k, v] of Object.entries(machine)) lines.push(`- ${k}: ${v}`);
  lines.push('', 'Each figure is the median of its runs, with min–max over those runs.', '');
  for (const [module, figures] of Object.entries(results)) {
    lines.push(
      `## ${module}`,
      '',
      '| figure | median | min–max | unit | runs | vs | ratio | target | met | note |',
      '|---|---:|---:|---|---:|---|---:|---:|---|---|',
    );
    for (const f of figures) {
      const ratio = f.ratio === undefined ? '' : `${f.ratio.toFixed(2)}×`;
      const target = f.target === undefined ? '' : `≥ ${f.target}×`;
      const met = f.met === undefined ? '' : f.met ? 'yes' : '**no**';
      lines.push(
        `| ${f.name} | ${fmt(f.median)} | ${fmt(f.min)}–${fmt(f.max)} | ${f.unit} | ${f.runs} | ${f.heldAgainst ?? ''} | ${ratio} | ${target} | ${met} | ${f.note ?? ''} |`,
      );
    }
    lines.push('');
  }
  return lines.join('\n');
}

async function main() {
  const args = process.argv.slice(2);
  const full = args.includes('--full');
  const only = args.filter((a) => !a.startsWith('--'));
  const unknown = only.filter((n) => !MODULES[n]);
  if (unknown.length) {
    console.error(`[bench] unknown benchmark ${unknown.join(', ')}; known: ${Object.keys(MODULES).join(', ')}`);
    process.exitCode = 2;
    return;
  }
  const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const redisUrl = process.env.REDIS_URL ?? ((await isPortOpen(6379)) ? 'redis://127.0.0.1:6379' : null);
  const opts: BenchOptions = { full, databaseUrl, redisUrl };

  const date = new Date().toISOString().slice(0, 10);
  const machine = {
    cores: os.cpus().length,
    cpu: os.cpus()[0]?.model ?? 'unknown',
    memory: `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`,
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    postgres: await serverVersion(databaseUrl),
    redis: redisUrl ? 'available' : 'none',
    mode: full ? 'full' : 'quick',
  };
  const results: Record<string, Figure[]> = {};
  const started = Date.now();
  for (const name of only.length ? only : Object.keys(MODULES)) {
    const t = Date.now();
    console.log(`[bench] ${name} …`);
    results[name] = await (await MODULES[name]!()).run(opts);
    for (const f of results[name]) {
      const vs =
        f.ratio === undefined ? '' : `  (${f.ratio.toFixed(2)}× ${f.heldAgainst}${f.target ? `, target ${f.target}×: ${f.met ? 'met' : 'NOT met'}` : ''})`;
      console.log(`  ${f.name}: ${fmt(f.median)} ${f.unit} [${fmt(f.min)}–${fmt(f.max)}, ${f.runs} runs]${vs}`);
    }
    console.log(`[bench] ${name} took ${((Date.now() - t) / 1000).toFixed(0)} s`);
  }
  const dir = new URL('./results/', import.meta.url);
  mkdirSync(dir, { recursive: true });
  const jsonFile = new URL(`${date}.json`, dir);
  // A run of some modules keeps the day's figures of the others.
  const earlier = only.length && existsSync(jsonFile) ? (JSON.parse(readFileSync(jsonFile, 'utf8')).results as Record<string, Figure[]>) : {};
  const merged = { ...earlier, ...results };
  const out = { date, machine, totalSeconds: Math.round((Date.now() - started) / 1000), results: merged };
  writeFileSync(jsonFile, `${JSON.stringify(out, null, 2)}\n`);
  writeFileSync(new URL(`${date}.md`, dir), markdown(date, machine, merged));
  console.log(`[bench] wrote bench/results/${date}.json and .md`);
}

main().catch((err) => {
  console.error(`[bench] ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exit(1);
});
