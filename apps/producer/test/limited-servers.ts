import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isPortOpen } from '@runledger/ledger';
import { Redis } from 'ioredis';
import { waitFor } from '../../../test/support/db';

// Servers a test may push to their limits: a PostgreSQL of its own (initdb + pg_ctl, as the
// `postgres` OS user when run as root) and a redis-server of its own, never the shared ones.

const asPostgres = (cmd: string, args: string[]) =>
  (process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args]) as [string, string[]];

export interface LimitedServer {
  url: string;
  stop(): Promise<void>;
}

/** A fresh PostgreSQL cluster on `port` started with `settings` (`max_connections=8` …). */
export async function startLimitedPostgres(port: number, settings: string[]): Promise<LimitedServer> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rl-limited-pg-'));
  chmodSync(dir, 0o777);
  const data = path.join(dir, 'data');
  execFileSync(...asPostgres('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-N']), { stdio: 'ignore' });
  const flags = ['-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', ...settings.flatMap((s) => ['-c', s])].join(' ');
  execFileSync(...asPostgres('pg_ctl', ['-D', data, '-o', flags, '-l', path.join(dir, 'log'), '-w', 'start']), { stdio: 'ignore' });
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async stop() {
      execFileSync(...asPostgres('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']), { stdio: 'ignore' });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A redis-server on `port` with no persistence, started with `settings` (`--maxmemory 4mb` …). */
export async function startLimitedRedis(port: number, settings: string[]): Promise<LimitedServer> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...settings], { stdio: 'ignore' });
  await waitFor(`redis-server on ${port}`, () => isPortOpen(port), 10_000);
  const url = `redis://127.0.0.1:${port}`;
  return {
    url,
    async stop() {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * Fills a noeviction Redis with junk keys until it refuses even a small write (OOM) after a pause
 * (Redis frees a client's query buffer when it goes idle, which takes it back under maxmemory);
 * returns how to free it again.
 */
export async function fillRedis(url: string): Promise<{ keys: number; free(): Promise<void> }> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  let keys = 0;
  const fill = async (bytes: number) => {
    for (;;) {
      const refused = await redis.set(`junk:${keys}`, 'x'.repeat(bytes)).then(
        () => false,
        (err: Error) => {
          if (!/OOM/.test(err.message)) throw err;
          return true;
        },
      );
      if (refused) return;
      keys++;
    }
  };
  await fill(64 * 1024);
  for (let round = 0; round < 20; round++) {
    await new Promise((r) => setTimeout(r, 200));
    const before = keys;
    for (const bytes of [4096, 256, 16]) await fill(bytes);
    if (keys === before) break;
  }
  return {
    keys,
    async free() {
      for (let i = 0; i < keys; i += 500) await redis.del(...Array.from({ length: Math.min(500, keys - i) }, (_, j) => `junk:${i + j}`));
      await redis.quit();
    },
  };
}
