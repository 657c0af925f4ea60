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
  /**
   * `transaction`: the connections go through a pooler in transaction mode (PgBouncer), which
   * keeps no session: statements run unnamed (no prepared statements) and no `options` startup
   * parameter is sent, so search_path (and jit off) must come from the pooler's connect_query or
   * the role's settings (RUNLEDGER_PG_POOLER; checked at start by requireMigrated). Default none.
   */
  pooler?: PgPooler;
}

/** The poolers the ledger can run behind (RUNLEDGER_PG_POOLER). */
export const PG_POOLERS = ['transaction'] as const;
export type PgPooler = (typeof PG_POOLERS)[number];

/** RUNLEDGER_PG_POOLER's message for a value it does not take. */
export const PG_POOLER_HINT = 'must be "transaction" (PgBouncer with pool_mode = transaction), or unset for a direct connection or a pooler in session mode';

/**
 * The connection for what needs a session of its own, which a pooler in transaction mode does not
 * keep: migrations (a session advisory lock) and BullMQ's PostgreSQL backend (LISTEN). That is
 * RUNLEDGER_PG_DIRECT_URL when set, else DATABASE_URL; behind a pooler without a direct URL it
 * throws, naming `what` and the setting.
 */
export function sessionUrl(env: { DATABASE_URL: string; RUNLEDGER_PG_POOLER?: PgPooler; RUNLEDGER_PG_DIRECT_URL?: string }, what: string): string {
  if (env.RUNLEDGER_PG_DIRECT_URL) return env.RUNLEDGER_PG_DIRECT_URL;
  if (env.RUNLEDGER_PG_POOLER) {
    throw new LedgerError(
      'POOLER_REFUSED',
      `${what} needs a session of its own (LISTEN, session advisory locks), which RUNLEDGER_PG_POOLER=${env.RUNLEDGER_PG_POOLER} does not keep: set RUNLEDGER_PG_DIRECT_URL to a connection straight to PostgreSQL.`,
    );
  }
  return env.DATABASE_URL;
}

/** Pools opened for a pooler, and their clients: run() names no statement on them. */
const sessionless = new WeakSet<object>();

/** False for a pool (or one of its clients) opened with `pooler`, where a prepared statement may meet another server connection. */
export function keepsPreparedStatements(db: object): boolean {
  return !sessionless.has(db);
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
    // PgBouncer refuses the `options` startup parameter; behind it the pooler sets both.
    options: options.pooler ? undefined : `-c search_path=${schema},public -c jit=off`,
    connectionTimeoutMillis: 5_000,
    types: LEDGER_TYPES,
  });
  // Without a listener an idle client's error (server restart) would crash the process.
  const onError = options.onError ?? ((err: Error) => console.error(`runledger: PostgreSQL client error: ${err.message}`));
  // Without listeners a client's error (server restart) would crash the process: pg-pool listens
  // only while a client is idle, so checked-out clients get their own listener too.
  pool.on('error', onError);
  pool.on('connect', (client) => {
    client.on('error', onError);
    if (options.pooler) sessionless.add(client);
  });
  if (options.pooler) sessionless.add(pool);
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
