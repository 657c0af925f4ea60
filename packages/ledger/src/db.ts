import pg from 'pg';
import { LEDGER_TYPES } from './bytea-array';
import { isConnectionError, LedgerError } from './errors';

/** Anything that runs a query: a pool, or a client inside a caller's transaction. */
export interface Queryable {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
}

export interface PoolOptions {
  connectionString: string;
  /** Schema holding the ledger and checkpoint tables. Default `public`. */
  schema?: string;
  /** Pool size. Default 10. */
  max?: number;
  /** Called for errors of idle clients (a restarted server); default logs to stderr. */
  onError?: (err: Error) => void;
}

/** Validates a schema name: it is interpolated into `search_path`, so only plain identifiers pass. */
export function checkSchemaName(schema: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new LedgerError('MIGRATION_FAILED', `DB_SCHEMA "${schema}" is not a plain lowercase identifier (letters, digits, _).`);
  }
  return schema;
}

/** Opens a pool whose connections use the ledger schema, with an error handler installed. */
export function createPool(options: PoolOptions): pg.Pool {
  const schema = checkSchemaName(options.schema ?? 'public');
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.max ?? 10,
    // JIT off: the ledger's statements are short, and a few (the chart rollup's CTEs over every
    // job_events partition) are estimated above jit_above_cost, where compiling them took
    // 0.8 s for a statement that runs in 4 ms.
    options: `-c search_path=${schema},public -c jit=off`,
    connectionTimeoutMillis: 5_000,
    types: LEDGER_TYPES,
  });
  // Without a listener an idle client's error (server restart) would crash the process.
  const onError = options.onError ?? ((err: Error) => console.error(`runledger: PostgreSQL client error: ${err.message}`));
  // Without listeners a client's error (server restart) would crash the process: pg-pool listens
  // only while a client is idle, so checked-out clients get their own listener too.
  pool.on('error', onError);
  pool.on('connect', (client) => client.on('error', onError));
  return pool;
}

/** Maps a connection failure to one typed error; other errors pass unchanged. */
export function wrapDbError(err: unknown): unknown {
  if (err instanceof LedgerError) return err;
  if (isConnectionError(err)) {
    return new LedgerError('DATABASE_UNAVAILABLE', `PostgreSQL is unreachable: ${(err as Error).message}`, { cause: err });
  }
  return err;
}
