import { type Queryable, wrapDbError } from './db';
import { sql } from './sql';

/**
 * Stores the admission's W3C `traceparent` on the job, once (a repeated admission keeps the
 * first). Pass the admission's transaction client to write it in that transaction. Returns
 * whether it was stored; throws LedgerError DATABASE_UNAVAILABLE when PostgreSQL is unreachable.
 */
export async function recordTraceContext(db: Queryable, jobId: string, traceparent: string): Promise<boolean> {
  try {
    return (await db.query(sql('record_trace_context'), [jobId, traceparent])).rowCount === 1;
  } catch (err) {
    throw wrapDbError(err);
  }
}

/** The job's stored `traceparent`, or null when it has none (tracing was off at admission) or does not exist. */
export async function readTraceContext(db: Queryable, jobId: string): Promise<string | null> {
  try {
    return ((await db.query(sql('get_job_annotations'), [jobId])).rows[0]?.trace_context as string | null | undefined) ?? null;
  } catch (err) {
    throw wrapDbError(err);
  }
}
