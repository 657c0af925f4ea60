// How long `runledger jobs` takes from process start to exit, the way a person runs it
// (`node apps/cli/dist/main.mjs jobs`, the bin `npx runledger` starts), against a migrated
// schema holding a few jobs: the built JavaScript held against the same command from the
// TypeScript sources through tsx (`node --conditions=@runledger/source --import tsx apps/cli/src/main.ts`,
// what every command did before). It runs `npm run build` first; then the two alternate,
// 10 runs each (median), after one unmeasured run of each.
import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import { benchSchema } from './bench-schema';
import { type BenchOptions, type Figure, holdAgainst, size, summarize, withLimit } from './figures';

const root = path.resolve(import.meta.dirname, '..');
const BUILT = [path.join(root, 'apps/cli/dist/main.mjs')];
const FROM_SOURCE = ['--conditions=@runledger/source', '--import', 'tsx', path.join(root, 'apps/cli/src/main.ts')];

/**
 * One `runledger jobs`: wall time and CPU time (user + system, from GNU time), in ms. On a
 * loaded machine the wall time mostly measures the wait for a core; the CPU time is what the
 * start-up costs, about its wall time on an idle machine. Throws when the command fails.
 */
function timeJobs(env: NodeJS.ProcessEnv, entry: string[]): { wall: number; cpu: number } {
  const started = performance.now();
  const run = spawnSync('/usr/bin/time', ['-f', 'cpu %U %S', process.execPath, ...entry, 'jobs', '--limit', '5'], { env, encoding: 'utf8' });
  const wall = performance.now() - started;
  if (run.status !== 0) throw new Error(`runledger jobs exited ${run.status}: ${run.stderr}`);
  const [, user, system] = /cpu (\S+) (\S+)/.exec(run.stderr) ?? [];
  return { wall, cpu: (Number(user) + Number(system)) * 1000 };
}

export async function run(opts: BenchOptions): Promise<Figure[]> {
  const runs = size(opts, { smoke: 2, quick: 10, full: 20 });
  // Build first, so the figure is the one a fresh clone gets after `npm ci`.
  if (!opts.smoke) execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'ignore' });
  const db = await benchSchema(opts, 'cli');
  try {
    for (let i = 0; i < 5; i++) await db.ledger.admit({ graph: 'echo', input: { steps: i } });
    const env = { ...process.env, DATABASE_URL: opts.databaseUrl, DB_SCHEMA: db.schema, NO_COLOR: '1' };
    const built: Array<{ wall: number; cpu: number }> = [];
    const source: Array<{ wall: number; cpu: number }> = [];
    // One of each first, unmeasured: tsx's compile cache and the OS file cache warm up.
    timeJobs(env, BUILT);
    timeJobs(env, FROM_SOURCE);
    for (let i = 0; i < runs; i++) {
      built.push(timeJobs(env, BUILT));
      source.push(timeJobs(env, FROM_SOURCE));
    }
    const figures: Figure[] = [];
    for (const kind of ['wall', 'cpu'] as const) {
      const what = kind === 'wall' ? 'wall time' : 'CPU time';
      const fromSource = summarize(
        `runledger jobs ${what}, TypeScript sources (tsx)`,
        'ms',
        source.map((r) => r[kind]),
        'node --import tsx: how every command started before',
      );
      const fromBuild = summarize(
        `runledger jobs ${what}, built JavaScript`,
        'ms',
        built.map((r) => r[kind]),
        'process start to exit, one query on a 5-job schema',
      );
      figures.push(fromSource, withLimit(holdAgainst(fromBuild, fromSource, undefined, 'lower'), 1_000, '≤ 1,000 ms'));
    }
    return figures;
  } finally {
    await db.drop();
  }
}
