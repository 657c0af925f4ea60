import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';
import { checkSchemaName, createPool } from './db';
import { isConnectionError, LedgerError } from './errors';
import { run, sql } from './sql';

const migrationsDir = new URL('../migrations/', import.meta.url);

export interface MigrateOptions {
  connectionString: string;
  schema?: string;
  log?: (line: string) => void;
  /**
   * Apply the numbered migrations up to this version only, and nothing after them (no count
   * seeding, no after-commit builds, no checkpoint tables): a schema as it stood before a later
   * migration, for the tests and benches that run that migration on a populated ledger.
   */
  upTo?: number;
}

/**
 * Below this line of a migration: statements that cannot run in a transaction (CREATE INDEX
 * CONCURRENTLY), one per `;` line end, each idempotent (IF NOT EXISTS). migrate() runs them after
 * the commit on every call, so a build a crash interrupted is finished by the next call.
 */
const AFTER_COMMIT = '-- runledger:after-commit';

/** The numbered migrations shipped with this package, in order; `afterCommit` as described at AFTER_COMMIT. */
export function listMigrations(): Array<{ version: number; name: string; text: string; afterCommit: string[] }> {
  return readdirSync(migrationsDir)
    .filter((f) => /^\d{4}_.+\.sql$/.test(f))
    .sort()
    .map((f) => {
      const [text = '', after = ''] = readFileSync(new URL(f, migrationsDir), 'utf8').split(AFTER_COMMIT);
      const afterCommit = after
        .split(/;\s*\n/)
        .map((s) => s.trim())
        .filter((s) => s !== '');
      return { version: Number(f.slice(0, 4)), name: f, text, afterCommit };
    });
}

/** Runs the after-commit statements of every applied migration; an index a failed build left INVALID is dropped and built again. */
async function runAfterCommit(client: pg.Client, schema: string): Promise<void> {
  for (const m of listMigrations()) {
    for (const statement of m.afterCommit) {
      const index = /CREATE INDEX CONCURRENTLY IF NOT EXISTS (\w+)/.exec(statement)?.[1];
      if (index) {
        const invalid = await client.query(
          'SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = $1 AND c.relnamespace = $2::regnamespace AND NOT i.indisvalid',
          [index, schema],
        );
        if (invalid.rowCount) await client.query(`DROP INDEX CONCURRENTLY ${index}`);
      }
      await client.query(statement);
    }
  }
}

/**
 * Applies pending migrations in one transaction, then outside it seeds the per-status counts
 * of rows that predate their triggers (once) and runs the after-commit statements (concurrent
 * index builds), then LangGraph's checkpoint tables, all under
 * one advisory lock so any number of processes may call it at once. Returns the versions applied.
 */
export async function migrate(options: MigrateOptions): Promise<number[]> {
  const schema = checkSchemaName(options.schema ?? 'public');
  const log = options.log ?? (() => {});
  const client = new pg.Client({ connectionString: options.connectionString });
  client.on('error', () => {});
  await client.connect();
  const applied: number[] = [];
  try {
    await client.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [`runledger.migrate:${schema}`]);
    await client.query('BEGIN');
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await client.query(`SET LOCAL search_path TO ${schema}`);
    await client.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const done = new Set((await client.query('SELECT version FROM schema_migrations')).rows.map((r) => Number(r.version)));
    for (const m of listMigrations()) {
      if (done.has(m.version) || m.version > (options.upTo ?? Number.POSITIVE_INFINITY)) continue;
      await client.query(m.text);
      await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
      applied.push(m.version);
      log(`applied ${m.name}`);
    }
    await client.query('COMMIT');
    if (options.upTo !== undefined) return applied;
    // Outside the transaction, so jobs stays unlocked while it counts (seed_ledger_counts.sql).
    await client.query(`SET search_path TO ${schema}`);
    await client.query(sql('seed_ledger_counts'));
    await runAfterCommit(client, schema);
    // PostgresSaver.setup() takes no lock of its own; the advisory lock above serialises it.
    // Imported here: it loads LangChain, which the ledger's other readers (the CLI) never need.
    const { PostgresSaver } = await import('@langchain/langgraph-checkpoint-postgres');
    const pool = createPool({ connectionString: options.connectionString, schema, max: 1 });
    try {
      await pool.query(sql('create_checkpoint_migrations'));
      await new PostgresSaver(pool, undefined, { schema }).setup();
    } finally {
      await pool.end();
    }
    return applied;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw new LedgerError('MIGRATION_FAILED', `Migration of schema ${schema} failed: ${(err as Error).message}`, { cause: err });
  } finally {
    await client.query('SELECT pg_advisory_unlock_all()').catch(() => {});
    await client.end().catch(() => {});
  }
}

const POOLER_FIX = (schema: string) =>
  `set RUNLEDGER_PG_POOLER=transaction and let the pooler set the path: in pgbouncer.ini's database entry connect_query='SET search_path TO ${schema}, public; SET jit TO off', or ALTER ROLE <user> SET search_path TO ${schema}, public (README, "Running it for real")`;

/**
 * Checks that the pool's connections resolve unqualified names to `schema`: createPool sets the
 * path with the `options` startup parameter, which a pooler in transaction mode refuses (PgBouncer)
 * or drops, and behind which (RUNLEDGER_PG_POOLER) the pooler or the role must set it. A schema not
 * created yet but first on the path passes (requireMigrated then says to migrate). Throws
 * LedgerError POOLER_REFUSED naming the fix.
 */
export async function requireSessionSchema(pool: pg.Pool, schema: string): Promise<void> {
  let row: { search_path: string; current_schema: string | null } | undefined;
  try {
    row = (await run<{ search_path: string; current_schema: string | null }>(pool, 'read_search_path')).rows[0];
  } catch (err) {
    if (!/unsupported startup parameter/i.test((err as Error).message)) throw err;
    throw new LedgerError('POOLER_REFUSED', `PostgreSQL's pooler refused the connection (${(err as Error).message}): ${POOLER_FIX(schema)}.`, { cause: err });
  }
  const first = row?.search_path
    .split(',')[0]
    ?.trim()
    .replace(/^"(.*)"$/, '$1');
  if (row?.current_schema === schema || first === schema) return;
  throw new LedgerError(
    'POOLER_REFUSED',
    `The connection's search_path is "${row?.search_path}" (resolving to ${row?.current_schema ?? 'no schema'}), not the ledger schema "${schema}" first: a pooler dropped the path Runledger sets; ${POOLER_FIX(schema)}.`,
  );
}

/**
 * Checks at start-up that the pool's connections reach the schema (requireSessionSchema) and that
 * it has every migration. Throws LedgerError POOLER_REFUSED, SCHEMA_NOT_MIGRATED saying which
 * command to run, or DATABASE_UNAVAILABLE when PostgreSQL cannot be reached.
 */
export async function requireMigrated(pool: pg.Pool, schema: string): Promise<void> {
  await requireSessionSchema(pool, schema);
  const latest = Math.max(0, ...listMigrations().map((m) => m.version));
  let current = 0;
  try {
    current = Number((await pool.query('SELECT coalesce(max(version), 0) AS v FROM schema_migrations')).rows[0]?.v ?? 0);
  } catch (err) {
    if (isConnectionError(err)) throw new LedgerError('DATABASE_UNAVAILABLE', `PostgreSQL is unreachable: ${(err as Error).message}`, { cause: err });
    if ((err as { code?: string }).code !== '42P01') throw err; // 42P01 undefined_table: never migrated
  }
  if (current >= latest) return;
  const state = current === 0 ? 'is not migrated' : `is at migration ${current} of ${latest}`;
  throw new LedgerError(
    'SCHEMA_NOT_MIGRATED',
    `Schema "${schema}" ${state}: run \`npx runledger migrate\` (\`npm run migrate\` in the repository) with the same DATABASE_URL and DB_SCHEMA, then start again.`,
  );
}

/** The highest migration version applied in `schema`, or 0 when none (for `doctor`). */
export async function schemaVersion(pool: pg.Pool): Promise<{ current: number; latest: number }> {
  const latest = Math.max(0, ...listMigrations().map((m) => m.version));
  try {
    const r = await pool.query('SELECT coalesce(max(version), 0) AS v FROM schema_migrations');
    return { current: Number(r.rows[0]?.v ?? 0), latest };
  } catch {
    return { current: 0, latest };
  }
}
