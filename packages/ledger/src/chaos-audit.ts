import type { Queryable } from './db';
import { run } from './sql';

/** Rows that should not exist: work recorded for jobs the ledger never admitted. */
export interface OrphanCount {
  count: number;
  /** Up to five of the job or thread ids, for the report. */
  sample: string[];
}

async function orphans(db: Queryable, statement: string): Promise<OrphanCount> {
  const row = (await run(db, statement)).rows[0];
  return { count: Number(row?.count ?? 0), sample: (row?.sample as string[] | null) ?? [] };
}

/** Ledger rows written by a worker for a job whose graph version it did not serve. */
export interface WrongVersionCount {
  /** Rows naming a worker, of jobs with a version, compared. */
  checked: number;
  count: number;
  /** Of them, `claimed` rows. */
  claims: number;
  /** Up to five rows: job, event, worker, the version it served and the job's. */
  sample: string[];
}

async function wrongVersionSteps(db: Queryable): Promise<WrongVersionCount> {
  const row = (await run(db, 'count_wrong_version_steps')).rows[0];
  return {
    checked: Number(row?.checked ?? 0),
    count: Number(row?.count ?? 0),
    claims: Number(row?.claims ?? 0),
    sample: (row?.sample as string[] | null) ?? [],
  };
}

/**
 * Aggregate reads for the chaos harness's audit (ARCHITECTURE.md, invariant 2: no job runs that was
 * not admitted). Throws LedgerError DATABASE_UNAVAILABLE when PostgreSQL cannot be reached.
 */
export const chaosAudit = {
  /** Demo-provider bookings whose job id is not in `jobs`. */
  orphanBookings: (db: Queryable) => orphans(db, 'count_orphan_bookings'),
  /** Checkpoint threads (checkpoints or pending writes) that no job in `jobs` names. */
  orphanCheckpointThreads: (db: Queryable) => orphans(db, 'count_orphan_checkpoint_threads'),
  /**
   * Claims, steps, checkpoints and ends a worker wrote for a job of a graph version it did not
   * announce (workers.info.versions), judged by the job's version at the time of each row.
   */
  wrongVersionSteps,
};
