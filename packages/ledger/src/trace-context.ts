import type { Queryable } from './db';
import { run } from './sql';

/** The job's stored `traceparent`, or null when it has none (tracing was off at admission) or does not exist. */
export async function readTraceContext(db: Queryable, jobId: string): Promise<string | null> {
  return ((await run(db, 'get_job_annotations', [jobId])).rows[0]?.trace_context as string | null | undefined) ?? null;
}
