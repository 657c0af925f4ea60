import { type Queryable, wrapDbError } from './db';
import { sql } from './sql';

/** A worker process as recorded by its heartbeats (`workers` table). */
export interface WorkerInfo {
  workerId: string;
  startedAt: Date;
  lastSeenAt: Date;
  /** Milliseconds since the last heartbeat, by the database clock. */
  seenMsAgo: number;
  info: Record<string, unknown>;
}

/**
 * Every worker that ever heartbeated, most recently seen first. A worker is alive when
 * `seenMsAgo` is within a few heartbeat intervals (heartbeats run at least once a second).
 * Throws LedgerError DATABASE_UNAVAILABLE when PostgreSQL cannot be reached.
 */
export async function listWorkers(db: Queryable): Promise<WorkerInfo[]> {
  try {
    const rows = (await db.query(sql('list_workers'))).rows;
    return rows.map((r) => ({
      workerId: r.worker_id as string,
      startedAt: r.started_at as Date,
      lastSeenAt: r.last_seen_at as Date,
      seenMsAgo: Number(r.seen_ms_ago),
      info: (r.info as Record<string, unknown>) ?? {},
    }));
  } catch (err) {
    throw wrapDbError(err);
  }
}
