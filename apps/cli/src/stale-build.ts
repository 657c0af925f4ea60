// In the repository `npx runledger` runs apps/cli/dist/, which `npm ci` (prepare) builds: a source
// edited since is not in it. One walk of the workspaces' src/ (a few ms) says so, so nobody debugs
// an old build. An installed CLI has no src/ beside its dist/ and is never checked.
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

/** Newest modification time (ms) of the files under `dir`, 0 when it is missing. */
function newest(dir: string): number {
  let latest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, e.name);
    latest = Math.max(latest, e.isDirectory() ? newest(full) : statSync(full).mtimeMs);
  }
  return latest;
}

/**
 * One line for stderr when `entry` (the running CLI's file) is the repository's build and a
 * workspace package's source is newer than it; undefined when the build is current, or when the
 * CLI runs from its sources or installed.
 */
export function staleBuildWarning(entry: string): string | undefined {
  const dist = path.dirname(entry);
  if (!entry.endsWith('.mjs') || !existsSync(path.join(dist, '../src'))) return undefined;
  const root = path.resolve(dist, '../../..');
  const built = statSync(entry).mtimeMs;
  for (const group of ['apps', 'packages']) {
    for (const name of readdirSync(path.join(root, group))) {
      const src = path.join(root, group, name, 'src');
      if (existsSync(src) && newest(src) > built) {
        return `runledger: ${group}/${name}/src changed after this build (${path.relative(root, entry)}); run \`npm run build\` to run the current sources.`;
      }
    }
  }
  return undefined;
}
