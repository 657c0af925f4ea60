// The map names only what exists: every file ARCHITECTURE.md and its notes under docs/ name in
// backticks (a path, or a bare file name such as `claim_lease.sql`) is a file of this repository.
// A rename that leaves the docs behind fails here instead of misleading the next reader.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '..');
const tracked = execFileSync('git', ['ls-files'], { cwd: root, encoding: 'utf8' }).split('\n').filter(Boolean);
const files = new Set(tracked);
const dirs = new Set(
  tracked.flatMap((f) =>
    f
      .split('/')
      .slice(0, -1)
      .map((_, i, parts) => parts.slice(0, i + 1).join('/')),
  ),
);
const basenames = new Set(tracked.map((f) => path.basename(f)));

/**
 * A backticked word that names a file of the repository: it ends in one of its source or doc
 * extensions. Not one starting with `/` or `./` (a route, or a file of the user's project) and not a
 * build output (`dist/`, made by `npm run build`).
 */
const FILE = /^[\w./-]+\.(ts|mts|sql|md|json|sh|tsx)$/;

function named(doc: string): string[] {
  const text = readFileSync(path.join(root, doc), 'utf8');
  return [...text.matchAll(/`([^`\s]+)`/g)]
    .map((m) => m[1] ?? '')
    .filter((w) => !/^\.?\//.test(w) && !w.includes('dist/'))
    .filter((w) => FILE.test(w) || /^(apps|packages|docs|bench|chaos|infra)\/[\w./-]+\/?$/.test(w));
}

function exists(name: string): boolean {
  const clean = name.replace(/\/$/, '');
  if (!clean.includes('/')) return basenames.has(clean);
  // A path may be written from the repository root or from inside a package (`src/sql/…`).
  return files.has(clean) || dirs.has(clean) || tracked.some((f) => f.endsWith(`/${clean}`));
}

const docs = ['ARCHITECTURE.md', 'docs/langgraph-api.md', ...readdirSync(path.join(root, 'docs/decisions')).map((f) => `docs/decisions/${f}`)];

describe('files the architecture docs name', () => {
  it.each(docs)('%s names only files that exist', (doc) => {
    const missing = named(doc).filter((n) => !exists(n));
    expect(missing).toEqual([]);
  });

  it('ARCHITECTURE.md stays a model: at most 400 lines', () => {
    expect(readFileSync(path.join(root, 'ARCHITECTURE.md'), 'utf8').split('\n').length).toBeLessThanOrEqual(400);
  });
});
