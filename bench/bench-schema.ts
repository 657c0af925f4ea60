// A throw-away migrated schema for one benchmark module, with the plain-INSERT baseline table.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type pg from 'pg';
import { createPool, Ledger, migrate } from '../packages/ledger/src/index';
import type { BenchOptions } from './figures';

// The comparison baseline (raw SQL is fine here: it is not product code). About as wide as an
// admitted jobs row: ids, a request hash, JSON input and metadata, a status, a timestamp.
const BASELINE_TABLE = `
CREATE TABLE plain_rows (
  id           text PRIMARY KEY,
  tenant       text NOT NULL,
  request_hash text NOT NULL,
  graph        text NOT NULL,
  thread_id    text NOT NULL,
  input        jsonb,
  metadata     jsonb NOT NULL,
  status       text NOT NULL,
  accepted_at  timestamptz NOT NULL DEFAULT now()
)`;
/** One baseline row: $1 id (also its thread), $2 request hash, $3 input (JSON text). */
export const BASELINE_INSERT =
  "INSERT INTO plain_rows (id, tenant, request_hash, graph, thread_id, input, metadata, status) VALUES ($1, 'default', $2, 'echo', $1, $3, '{}', 'accepted')";
/** The same for many rows in one statement: $1 ids (text[]), $2 one request hash, $3 inputs (jsonb[]). */
export const BASELINE_INSERT_MANY = `INSERT INTO plain_rows (id, tenant, request_hash, graph, thread_id, input, metadata, status)
SELECT id, 'default', $2, 'echo', id, input, '{}', 'accepted' FROM unnest($1::text[], $3::jsonb[]) AS t(id, input)`;

export interface BenchSchema {
  schema: string;
  pool: pg.Pool;
  ledger: Ledger;
  /** One baseline commit: a single-row INSERT of a jobs-sized row. */
  insertPlainRow(n: number): Promise<unknown>;
  /** Drops the schema (and `<schema>_queue` of the PostgreSQL queue backend, `_pgboss` and `_graphile` of the admission peers) and closes the pool. */
  drop(): Promise<void>;
}

export async function benchSchema(opts: BenchOptions, name: string, poolSize = 20): Promise<BenchSchema> {
  const schema = `bench_${name}_${randomBytes(3).toString('hex')}`;
  await migrate({ connectionString: opts.databaseUrl, schema });
  const pool = createPool({ connectionString: opts.databaseUrl, schema, max: poolSize });
  await pool.query(BASELINE_TABLE);
  const hash = randomBytes(32).toString('hex');
  return {
    schema,
    pool,
    ledger: new Ledger(pool),
    insertPlainRow: (n) => pool.query(BASELINE_INSERT, [randomUUID(), hash, JSON.stringify({ steps: 2, n })]),
    async drop() {
      for (const s of [schema, `${schema}_queue`, `${schema}_pgboss`, `${schema}_graphile`]) {
        await pool.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`).catch((err: Error) => console.error(`[bench] could not drop ${s}: ${err.message}`));
      }
      await pool.end();
    },
  };
}

/**
 * An experiment, not product behaviour: the same pool, but every `query(text, values)` runs as
 * a named statement, so PostgreSQL parses and plans it once per connection instead of per call.
 */
export function withNamedStatements(pool: pg.Pool): pg.Pool {
  const query = (text: unknown, values?: unknown[]) => {
    if (typeof text !== 'string') return pool.query(text as pg.QueryConfig, values);
    const name = `bench_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`;
    return pool.query({ name, text, values });
  };
  return new Proxy(pool, { get: (t, p) => (p === 'query' ? query : Reflect.get(t, p, t)) });
}
