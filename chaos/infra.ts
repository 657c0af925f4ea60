// The servers a chaos run owns: an embedded PostgreSQL and a redis-server, each on a free port
// and each restartable on the same port (and, for PostgreSQL, the same data directory).
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { type EmbeddedDatabase, freePort, isPortOpen, startEmbeddedPostgres } from '../packages/ledger/src/index';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A scratch directory the `postgres` OS user can reach (embedded PostgreSQL runs as it under root). */
export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  chmodSync(dir, 0o755);
  return dir;
}

/** An embedded PostgreSQL that can be stopped and started again on the same port and data. */
export class ChaosPostgres {
  private db: EmbeddedDatabase | undefined;
  private constructor(
    readonly dir: string,
    readonly port: number,
  ) {}

  static async start(root: string): Promise<ChaosPostgres> {
    const pg = new ChaosPostgres(path.join(root, 'pg'), await freePort());
    await pg.up();
    return pg;
  }

  get url(): string {
    return `postgres://postgres:postgres@127.0.0.1:${this.port}/postgres`;
  }

  private async up(): Promise<void> {
    this.db = await startEmbeddedPostgres({ dir: this.dir, port: this.port });
  }

  /** Fast shutdown (clients are disconnected), then start on the same port and data. */
  async restart(downMs = 0): Promise<void> {
    await this.stop();
    if (downMs > 0) await sleep(downMs);
    for (let i = 0; ; i++) {
      try {
        await this.up();
        return;
      } catch (err) {
        // The old postmaster may still hold the port for a moment.
        if (i >= 20) throw err;
        await sleep(250);
      }
    }
  }

  async stop(): Promise<void> {
    const db = this.db;
    this.db = undefined;
    await db?.stop();
  }

  /** Stops the server and deletes its data directory. */
  async remove(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Synchronous immediate shutdown (SIGQUIT to the postmaster) for process exit handlers. */
  killNow(): void {
    try {
      const pid = Number(readFileSync(path.join(this.dir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      if (pid > 0) process.kill(pid, 'SIGQUIT');
    } catch {
      // Not running.
    }
  }
}

/** Redis's `maxmemory-policy` values (`--redis-policy`). */
export const REDIS_POLICIES = [
  'noeviction',
  'allkeys-lru',
  'allkeys-lfu',
  'allkeys-random',
  'volatile-lru',
  'volatile-lfu',
  'volatile-random',
  'volatile-ttl',
] as const;
export type RedisPolicy = (typeof REDIS_POLICIES)[number];

/** A redis-server with no persistence: a restart loses every key, like FLUSHALL. */
export class ChaosRedis {
  private child: ChildProcess | undefined;
  private constructor(
    readonly port: number,
    readonly policy: RedisPolicy,
  ) {}

  static async start(policy: RedisPolicy = 'noeviction'): Promise<ChaosRedis> {
    const redis = new ChaosRedis(await freePort(), policy);
    await redis.up();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  private async up(): Promise<void> {
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--maxmemory-policy', this.policy];
    const child = spawn('redis-server', args, { stdio: 'ignore' });
    this.child = child;
    const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`redis-server exited with ${code} on start`))));
    exited.catch(() => {});
    for (let i = 0; i < 100; i++) {
      if (await Promise.race([isPortOpen(this.port), exited])) return;
      await sleep(50);
    }
    throw new Error(`redis-server did not open port ${this.port}`);
  }

  /** Runs `fn` on a short-lived connection of the harness's own. */
  private async admin<T>(fn: (client: Redis) => Promise<T>): Promise<T> {
    const client = new Redis(this.url, { maxRetriesPerRequest: 1, lazyConnect: true });
    client.on('error', () => {});
    try {
      await client.connect();
      return await fn(client);
    } finally {
      client.disconnect();
    }
  }

  /** Deletes every key (the queue's waiting, active and delayed deliveries). */
  async flushAll(): Promise<void> {
    await this.admin((c) => c.flushall());
  }

  /**
   * Out of memory for `ms`: `maxmemory` set to 90 % of what Redis uses now, then lifted (0, no
   * limit). Under `noeviction` every write (each `add`, each move of a delivery) fails with OOM;
   * under an evicting policy Redis drops keys, deliveries among them, until it fits. Returns the detail.
   */
  async outOfMemory(ms: number): Promise<string> {
    const used = await this.admin(async (c) => Number(/used_memory:(\d+)/.exec(await c.info('memory'))?.[1] ?? 0));
    const limit = Math.max(1, Math.floor(used * 0.9));
    await this.admin((c) => c.config('SET', 'maxmemory', String(limit)));
    try {
      await sleep(ms);
    } finally {
      await this.admin((c) => c.config('SET', 'maxmemory', '0'));
    }
    return `maxmemory ${limit} B (used ${used} B), ${this.policy}, for ${ms} ms`;
  }

  /** Kills the server (no persistence, so every key is gone) and starts an empty one on the same port. */
  async restart(downMs = 0): Promise<void> {
    await this.stop('SIGKILL');
    if (downMs > 0) await sleep(downMs);
    await this.up();
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null) return;
    const gone = new Promise((r) => child.once('exit', r));
    child.kill(signal);
    await gone;
  }

  /** Synchronous last-resort kill for process exit handlers. */
  killNow(): void {
    this.child?.kill('SIGKILL');
  }
}
