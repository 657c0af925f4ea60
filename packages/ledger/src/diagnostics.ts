import type { Queryable } from './db';
import { run } from './sql';

/**
 * The server's version (`{ version: '16.4', versionNum: 160004 }`), for `runledger doctor`.
 * Throws LedgerError DATABASE_UNAVAILABLE when PostgreSQL cannot be reached.
 */
export async function serverVersion(db: Queryable): Promise<{ version: string; versionNum: number }> {
  const row = (await run(db, 'server_version')).rows[0];
  return { version: String(row?.version), versionNum: Number(row?.version_num) };
}

/**
 * How many checkpoints LangGraph holds for `tenant`'s thread `threadId` (root namespace) in the ledger's schema.
 * Throws LedgerError DATABASE_UNAVAILABLE when PostgreSQL cannot be reached, and the driver's
 * error when the checkpoint tables are missing (run the migrations).
 */
export async function countThreadCheckpoints(db: Queryable, tenant: string, threadId: string): Promise<number> {
  return Number((await run(db, 'count_thread_checkpoints', [tenant, threadId])).rows[0]?.count ?? 0);
}
