// A throwaway PostgreSQL cluster whose data directory lives on a small tmpfs of its own, so a
// test can fill its disk for real (SQLSTATE 53100 disk_full) and free it again. The WAL lives on
// the ordinary disk (`initdb --waldir`): a full data volume makes statements fail with 53100,
// while a full WAL volume makes PostgreSQL stop (PANIC), which is an outage, not this fault.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../../packages/ledger/src/index';

const BIN = '/usr/lib/postgresql/15/bin';

/** Runs a PostgreSQL binary, as the `postgres` OS user when this process is root (initdb refuses root). */
function asPostgres(cmd: string, args: string[]): void {
  const bin = path.join(BIN, cmd);
  const [file, argv] = process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
  execFileSync(file, argv, { stdio: 'ignore' });
}

/**
 * Why a small tmpfs cannot be mounted here (not root, no mount permission in this container,
 * no PostgreSQL 15 binaries), or undefined when it can. Tries a 1 MB mount and unmounts it.
 */
export function smallDiskUnavailable(): string | undefined {
  if (process.platform !== 'linux') return `tmpfs mounts need Linux (this is ${process.platform})`;
  try {
    execFileSync(path.join(BIN, 'pg_ctl'), ['--version'], { stdio: 'ignore' });
  } catch {
    return `no PostgreSQL 15 binaries in ${BIN}`;
  }
  const probe = mkdtempSync(path.join(os.tmpdir(), 'rl-mount-probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', probe], { stdio: 'pipe' });
    execFileSync('umount', [probe], { stdio: 'ignore' });
    return undefined;
  } catch (err) {
    return `mounting a tmpfs is not permitted here (${((err as { stderr?: Buffer }).stderr?.toString() || (err as Error).message).trim()})`;
  }
}

export interface SmallDiskPostgres {
  /** postgres://postgres@127.0.0.1:<port>/postgres (trust auth). */
  url: string;
  /** Fills the data volume with a table of big rows, then smaller ones, until even a small row gets 53100; returns the bytes written. */
  fill(): Promise<number>;
  /** Drops the filler table and checkpoints, which gives its space back to the volume. */
  free(): Promise<void>;
  /** Immediate shutdown, unmount, delete. */
  stop(): Promise<void>;
}

/**
 * Starts PostgreSQL 15 with its data directory on a tmpfs of `sizeMb` (default 96: about 40 MB
 * go to the fresh cluster and the ledger's schema, the rest is for the test to fill).
 */
export async function startPostgresOnSmallDisk(sizeMb = 96): Promise<SmallDiskPostgres> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'rl-small-disk-'));
  chmodSync(root, 0o777);
  const mount = path.join(root, 'disk');
  const wal = path.join(root, 'wal');
  mkdirSync(mount);
  mkdirSync(wal);
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m,mode=0777`, 'tmpfs', mount], { stdio: 'ignore' });
  chmodSync(wal, 0o777);
  const data = path.join(mount, 'data');
  const port = await freePort();
  const unmount = () => {
    try {
      execFileSync('umount', ['-l', mount], { stdio: 'ignore' });
    } catch {
      // Already unmounted.
    }
    rmSync(root, { recursive: true, force: true });
  };
  try {
    asPostgres('initdb', ['-D', data, '--waldir', path.join(wal, 'pg_wal'), '-U', 'postgres', '--auth=trust', '-N']);
    const flags = ['-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'autovacuum=off'].join(' ');
    asPostgres('pg_ctl', ['-D', data, '-o', flags, '-l', path.join(root, 'log'), '-w', 'start']);
  } catch (err) {
    unmount();
    throw err;
  }
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  return {
    url,
    async fill() {
      await admin.query('CREATE TABLE IF NOT EXISTS disk_filler (n serial, b text)');
      // Stored as it is, never compressed: every byte takes a byte of the volume.
      await admin.query('ALTER TABLE disk_filler ALTER COLUMN b SET STORAGE EXTERNAL');
      let written = 0;
      for (const size of [1 << 20, 64 << 10, 4 << 10, 256, 32]) {
        for (;;) {
          const full = await admin
            .query(`INSERT INTO disk_filler (b) SELECT string_agg(md5(random()::text), '') FROM generate_series(1, $1)`, [size / 32])
            .then(
              () => false,
              (err: { code?: string }) => {
                if (err.code !== '53100') throw err;
                return true;
              },
            );
          if (full) break;
          written += size;
        }
      }
      return written;
    },
    async free() {
      await admin.query('DROP TABLE IF EXISTS disk_filler');
      await admin.query('CHECKPOINT');
    },
    async stop() {
      await admin.end().catch(() => {});
      try {
        asPostgres('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']);
      } catch {
        // Not running.
      }
      unmount();
    },
  };
}
