#!/usr/bin/env node
// The `runledger` command in the repository. An operator command runs the built JavaScript
// (dist/, written by `npm run build`, which `npm ci` runs) when it is newer than every source
// file: compiling the TypeScript at start-up took seconds. Otherwise, with RUNLEDGER_FROM_SOURCE=1,
// and for the long-running commands (dev, producer, worker, which spawn source processes), tsx
// runs the sources as they are. The installed package's bin is dist/main.mjs itself.
import { readdirSync, statSync } from 'node:fs';
import { register } from 'node:module';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '../../..');
const WORKSPACES = ['apps', 'packages'];
const LONG_RUNNING = new Set(['dev', 'producer', 'worker']);

/** Newest modification time (ms) of the files under `dir`, 0 when it is missing. */
function newest(dir) {
  let latest = 0;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const full = path.join(dir, e.name);
    latest = Math.max(latest, e.isDirectory() ? newest(full) : statSync(full).mtimeMs);
  }
  return latest;
}

/** True when every workspace package's dist/ is newer than its src/ and its package.json. */
function builtIsCurrent() {
  for (const group of WORKSPACES) {
    for (const name of readdirSync(path.join(root, group))) {
      const dir = path.join(root, group, name);
      let built;
      try {
        built = Math.min(
          ...readdirSync(path.join(dir, 'dist'))
            .filter((f) => f.endsWith('.mjs'))
            .map((f) => statSync(path.join(dir, 'dist', f)).mtimeMs),
        );
      } catch {
        return false;
      }
      if (!Number.isFinite(built) || built < Math.max(newest(path.join(dir, 'src')), statSync(path.join(dir, 'package.json')).mtimeMs)) return false;
    }
  }
  return true;
}

const command = process.argv[2];
if (!LONG_RUNNING.has(command) && process.env.RUNLEDGER_FROM_SOURCE !== '1' && builtIsCurrent()) {
  // The packages' exports name their TypeScript sources; this hook loads the built file beside each.
  register('./dist-resolve.mjs', import.meta.url);
  await import('../dist/main.mjs');
} else {
  const { register: registerTsx } = await import('tsx/esm/api');
  registerTsx();
  await import('../src/main.ts');
}
