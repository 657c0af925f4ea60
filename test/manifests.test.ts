// What `npm pack` ships: every workspace package exports (and the CLI's bin names) the files
// tsdown.config.ts builds into dist/, so the tarball npm itself makes works; the "@runledger/source"
// condition in front of each export is what the repository's tools load instead (vitest here,
// tsc through customConditions, tsx through --conditions=@runledger/source).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import config from '../tsdown.config.ts';

const root = path.resolve(import.meta.dirname, '..');

interface Manifest {
  name: string;
  exports?: Record<string, { '@runledger/source': string; types: string; default: string }>;
  bin?: Record<string, string>;
  files: string[];
  publishConfig?: Record<string, unknown>;
  scripts: Record<string, string>;
}

const builds = (Array.isArray(config) ? config : [config]) as Array<{ cwd: string; entry: Record<string, string>; dts?: boolean }>;

describe.each(builds.map((b) => [b.cwd, b] as const))('%s', (dir, build) => {
  const manifest = JSON.parse(readFileSync(path.join(root, dir, 'package.json'), 'utf8')) as Manifest;
  const built = Object.keys(build.entry).map((name) => `./dist/${name}.mjs`);

  it('exports and bin name built files, each export with its TypeScript source first', () => {
    const named = [...Object.values(manifest.exports ?? {}).map((e) => e.default), ...Object.values(manifest.bin ?? {})];
    expect(named.length).toBeGreaterThan(0);
    for (const file of named) expect(built).toContain(file);
    for (const [subpath, e] of Object.entries(manifest.exports ?? {})) {
      expect(Object.keys(e), subpath).toEqual(['@runledger/source', 'types', 'default']);
      const source = e['@runledger/source'];
      expect(existsSync(path.join(root, dir, source)), source).toBe(true);
      expect(build.entry[path.basename(e.default, '.mjs')]).toBe(source.replace(/^\.\//, ''));
      expect(e.types).toBe(e.default.replace(/\.mjs$/, '.d.mts'));
    }
    expect(manifest.files).toContain('dist');
    // npm ignores publishConfig's exports and bin: what the manifest says is what the tarball says.
    expect(manifest.publishConfig).toBeUndefined();
  });

  it('builds itself before `npm pack` / `npm publish` of it alone', () => {
    expect(manifest.scripts.prepack).toBe(`tsdown -c ../../tsdown.config.ts -F ${dir} --log-level warn`);
    expect(existsSync(path.join(root, dir, 'LICENSE'))).toBe(true);
  });
});

// Node >= 22.18 strips types itself, and tsdown then loads its config with Node's own resolver
// (no extensionless imports); older lines that can strip types do it behind a flag; Node 20 cannot.
const typescript = (process.features as { typescript?: string | false }).typescript;
const strip = typescript ? [] : process.allowedNodeEnvironmentFlags.has('--experimental-strip-types') ? ['--experimental-strip-types'] : undefined;

it.skipIf(!strip)('Node loads tsdown.config.ts by itself, as tsdown does on Node >= 22.18', () => {
  const code = "const c = (await import('./tsdown.config.ts')).default; console.log('configs', c.length);";
  const r = spawnSync(process.execPath, [...(strip ?? []), '--input-type=module', '-e', code], { cwd: root, encoding: 'utf8', timeout: 60_000 });
  expect(r.stdout.trim(), r.stderr).toBe(`configs ${builds.length}`);
  expect(r.status).toBe(0);
});

it('vitest loads a workspace package by name from its TypeScript source, not from dist/', async () => {
  const byName = await import('@runledger/ledger');
  const bySource = await import('../packages/ledger/src/index.ts');
  expect(byName.Ledger).toBe(bySource.Ledger);
});
