import { readdirSync, readFileSync } from 'node:fs';
import type pg from 'pg';
import { keepsPreparedStatements, type Queryable, wrapDbError } from './db';

const dir = new URL('./sql/', import.meta.url);

/** Every statement in `sql/`, keyed by file name without `.sql`. Loaded once at import. */
export const SQL: Readonly<Record<string, string>> = Object.fromEntries(
  readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .map((f) => [f.slice(0, -4), readFileSync(new URL(f, dir), 'utf8')]),
);

export function sql(name: string): string {
  const text = SQL[name];
  if (text === undefined) throw new Error(`No SQL statement named ${name} in packages/ledger/src/sql`);
  return text;
}

/**
 * Statements prepared once per connection (all on the hot path, none with optional filters):
 * parsing and planning them was over half of their server CPU (bench/admit-cost.ts); reads with
 * optional filters stay unnamed. Not here: statements that join a list of job ids to `jobs`
 * (heartbeat.sql, mark_enqueued.sql). Prepared, they settle on a generic plan that PostgreSQL
 * keeps until an ANALYZE of `jobs`; made while the ledger was small, that plan scans all of
 * `jobs` on every call as it grows (test/plan-growth.int.test.ts). Planned per call they cost a
 * plan each, about 0.1–0.2 ms, once per heartbeat interval or per redelivery.
 */
const PREPARED = new Set([
  'admit_jobs',
  'record_enqueued',
  'claim_lease',
  'append_event',
  'record_checkpoint',
  'end_attempt',
  'get_job',
  'find_effect',
  'record_effect_intent',
  'settle_effect',
  'list_pending_effects',
  // Every worker runs these each sweep interval (1 s): planning them was most of their server CPU.
  'fold_ledger_counts',
  'roll_up_event_minutes',
  'expire_leases',
  'list_undelivered',
  'list_limited_graphs',
  // Every streamed or joined run's shared tail polls it (apps/producer run-tails.ts).
  'tail_run_stream',
  // Every checkpoint and pending write of a run (fenced-saver.ts, thread-saver.ts).
  'put_checkpoint',
  'put_checkpoint_running',
  'put_writes',
  'put_checkpoint_unfenced',
  'put_writes_unfenced',
]);

/**
 * Runs the statement `name` (sql/<name>.sql) on `db`, a pool or a client in a transaction: the one
 * place the ledger runs a statement. A lost connection becomes LedgerError DATABASE_UNAVAILABLE;
 * other errors pass unchanged (a constraint's SQLSTATE stays readable on them). Behind a pooler in
 * transaction mode (createPool's `pooler`) every statement runs unnamed: the next transaction
 * may run on a server connection that never saw the Parse of a named one.
 */
export async function run<R extends pg.QueryResultRow = pg.QueryResultRow>(db: Queryable, name: string, values: unknown[] = []): Promise<pg.QueryResult<R>> {
  try {
    return await (db as pg.Pool).query<R>({
      name: PREPARED.has(name) && keepsPreparedStatements(db) ? `runledger_${name}` : undefined,
      text: sql(name),
      values,
    });
  } catch (err) {
    throw wrapDbError(err);
  }
}

/** Runs `fn` in one transaction on one pooled client; rolled back when it throws. */
export async function inTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect().catch((err) => {
    throw wrapDbError(err);
  });
  try {
    await client.query('BEGIN');
    const out = await fn(client);
    await client.query('COMMIT');
    return out;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw wrapDbError(err);
  } finally {
    client.release();
  }
}
