import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import './provided';
import { createPool, Ledger, migrate } from '../../packages/ledger/src/index';

export interface TestDb {
  url: string;
  schema: string;
  ledger: Ledger;
  close(): Promise<void>;
}

/**
 * A fresh, migrated schema for one test file (kept afterwards for inspection). Each file
 * gets its own, so files run in parallel without sharing rows.
 */
export async function testDb(name: string, options: { leaseTtlMs?: number; poolSize?: number } = {}): Promise<TestDb> {
  const url = inject('databaseUrl');
  const schema = `t_${name.replace(/[^a-z0-9]/gi, '_').toLowerCase()}_${randomBytes(3).toString('hex')}`;
  await migrate({ connectionString: url, schema });
  const pool = createPool({ connectionString: url, schema, max: options.poolSize ?? 20 });
  const ledger = new Ledger(pool, { leaseTtlMs: options.leaseTtlMs });
  return { url, schema, ledger, close: () => pool.end() };
}

/** Resolves after `ms`. */
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` until it returns a truthy value or `timeoutMs` passes; throws with `what` on timeout. */
export async function waitFor<T>(what: string, fn: () => Promise<T | undefined | null | false>, timeoutMs = 20_000, everyMs = 50): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** Makes the current lease of `jobId` expired by the database clock (a dead or paused worker). */
export async function backdateLease(pool: Ledger['pool'], jobId: string): Promise<void> {
  await pool.query("UPDATE jobs SET lease_expires_at = now() - interval '1 second' WHERE job_id = $1", [jobId]);
}
