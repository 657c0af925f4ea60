import type { Queryable } from './db';
import { run } from './sql';

/** Rows and bytes (heap, TOAST and indexes) of one table. */
export interface TableStorage {
  table: string;
  rows: number;
  bytes: number;
}

/**
 * Rows and on-disk bytes of jobs, job_events, effects and LangGraph's checkpoints,
 * checkpoint_blobs and checkpoint_writes in the pool's schema (bench/storage.ts).
 * Throws LedgerError DATABASE_UNAVAILABLE when PostgreSQL cannot be reached.
 */
export async function storageStats(db: Queryable): Promise<TableStorage[]> {
  const rows = (await run(db, 'storage_stats')).rows;
  return rows.map((r) => ({ table: String(r.table_name), rows: Number(r.row_count), bytes: Number(r.total_bytes) }));
}
