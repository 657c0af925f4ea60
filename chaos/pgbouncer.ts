// A PgBouncer in transaction mode in front of one PostgreSQL database, for `npm run chaos --
// --pgbouncer` and packages/ledger/test/pgbouncer.int.test.ts: its ini in a scratch directory,
// trust auth from an auth_file, a small server pool, and the ledger's search_path (and jit off)
// set on every server connection by connect_query, since Runledger then sends no `options`.
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkSchemaName, isPortOpen } from '../packages/ledger/src/index';

export const PGBOUNCER_BIN = process.env.PGBOUNCER_BIN ?? '/usr/sbin/pgbouncer';

export interface PgBouncerOptions {
  /** The PostgreSQL it pools (its user and password log the server connections in). */
  target: string;
  port: number;
  /** The ledger schema connect_query puts first on search_path; undefined leaves search_path alone. */
  schema: string | undefined;
  /** Server connections per database and user. Default 20. */
  poolSize?: number;
  /** Client connections accepted. Default 200. */
  maxClients?: number;
  /** Seconds a client's query may wait for a server connection (query_wait_timeout; PgBouncer's default 120). */
  queryWaitTimeoutS?: number;
  /** Drop the `options` startup parameter silently instead of refusing the connection (ignore_startup_parameters). Default false. */
  ignoreStartupOptions?: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const quoted = (s: string) => `'${s.replaceAll("'", "''")}'`;

/** pgbouncer.ini and userlist.txt for `options`. */
export function pgBouncerIni(options: PgBouncerOptions): { ini: string; users: string; database: string } {
  const t = new URL(options.target);
  const database = decodeURIComponent(t.pathname.slice(1)) || 'postgres';
  const user = decodeURIComponent(t.username) || 'postgres';
  const server = [`host=${t.hostname}`, `port=${t.port || 5432}`, `dbname=${database}`, `user=${user}`];
  if (t.password) server.push(`password=${decodeURIComponent(t.password)}`);
  if (options.schema !== undefined) {
    server.push(`connect_query=${quoted(`SET search_path TO ${checkSchemaName(options.schema)}, public; SET jit TO off`)}`);
  }
  const ini = [
    '[databases]',
    `${database} = ${server.join(' ')}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${options.port}`,
    'unix_socket_dir =',
    'auth_type = trust',
    'auth_file = userlist.txt',
    'pool_mode = transaction',
    `default_pool_size = ${options.poolSize ?? 20}`,
    `max_client_conn = ${options.maxClients ?? 200}`,
    // A restarted PostgreSQL is retried within a second, not after the default 15 s.
    'server_login_retry = 1',
    'server_connect_timeout = 5',
    'admin_users = postgres',
    ...(options.ignoreStartupOptions ? ['ignore_startup_parameters = options'] : []),
    ...(options.queryWaitTimeoutS === undefined ? [] : [`query_wait_timeout = ${options.queryWaitTimeoutS}`]),
    '',
  ].join('\n');
  return { ini, users: `${JSON.stringify(user)} ""\n`, database };
}

/** One running pgbouncer; `url(user, database)` is the client's connection string. */
export class PgBouncer {
  private child: ChildProcess | undefined;
  log = '';
  private constructor(
    readonly dir: string,
    readonly options: PgBouncerOptions,
  ) {}

  static async start(options: PgBouncerOptions): Promise<PgBouncer> {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'runledger-pgbouncer-'));
    chmodSync(dir, 0o755);
    const { ini, users } = pgBouncerIni(options);
    writeFileSync(path.join(dir, 'pgbouncer.ini'), ini, { mode: 0o644 });
    writeFileSync(path.join(dir, 'userlist.txt'), users, { mode: 0o644 });
    const bouncer = new PgBouncer(dir, options);
    await bouncer.up();
    return bouncer;
  }

  get url(): string {
    const t = new URL(this.options.target);
    t.host = `127.0.0.1:${this.options.port}`;
    t.password = '';
    return t.toString();
  }

  private async up(): Promise<void> {
    // PgBouncer will not run as root: it drops to `nobody`, which can read the 0644 files above.
    const asRoot = process.getuid?.() === 0 ? ['-u', 'nobody'] : [];
    const child = spawn(PGBOUNCER_BIN, [...asRoot, path.join(this.dir, 'pgbouncer.ini')], { cwd: this.dir, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    const keep = (d: Buffer) => {
      this.log = (this.log + d.toString()).slice(-20_000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`pgbouncer exited with ${code} on start:\n${this.log}`))));
    exited.catch(() => {});
    for (let i = 0; i < 200; i++) {
      if (await Promise.race([isPortOpen(this.options.port), exited])) return;
      await sleep(50);
    }
    throw new Error(`pgbouncer did not open port ${this.options.port}:\n${this.log}`);
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (child && child.exitCode === null) {
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGINT');
      await Promise.race([gone, sleep(3_000).then(() => child.kill('SIGKILL'))]);
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Synchronous last-resort kill for process exit handlers. */
  killNow(): void {
    this.child?.kill('SIGKILL');
  }
}
