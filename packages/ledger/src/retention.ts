import type pg from 'pg';
import { wrapDbError } from './db';
import { sql } from './sql';

export interface RetentionOptions {
  /** Prune threads whose every job is terminal and finished more than this many days ago (> 0; fractions allowed). */
  olderThanDays: number;
  /** Candidate jobs examined per statement. Default 500. */
  batchSize?: number;
  /** Statements per call, so one call stays short. Default 100. */
  maxBatches?: number;
}

/** What one retention pass removed. Job rows are never removed, only marked pruned. */
export interface RetentionReport {
  threads: number;
  /** Jobs whose history was removed (now marked `pruned_at`). */
  jobs: number;
  checkpoints: number;
  checkpointBlobs: number;
  checkpointWrites: number;
  jobEvents: number;
  /** False when another process was pruning at the same time (this call then removed nothing more). */
  complete: boolean;
}

/**
 * Retention for the tables LangGraph's saver never prunes: removes the checkpoints,
 * checkpoint blobs, checkpoint writes and job events of threads whose every job is terminal
 * and finished more than `olderThanDays` ago, in batches, and reports what it removed. Job rows
 * (the permanent idempotency receipts) and effects stay; a thread with any unfinished or recent
 * job is never touched. Safe to call from many processes: one prunes at a time. Throws
 * RangeError for a non-positive age, LedgerError DATABASE_UNAVAILABLE when PostgreSQL is unreachable.
 */
export async function pruneFinishedThreads(pool: pg.Pool, options: RetentionOptions): Promise<RetentionReport> {
  if (!(options.olderThanDays > 0)) throw new RangeError(`olderThanDays must be a positive number of days, got ${options.olderThanDays}.`);
  const batchSize = options.batchSize ?? 500;
  const report: RetentionReport = { threads: 0, jobs: 0, checkpoints: 0, checkpointBlobs: 0, checkpointWrites: 0, jobEvents: 0, complete: false };
  for (let batch = 0; batch < (options.maxBatches ?? 100); batch++) {
    let row: Record<string, unknown> | undefined;
    try {
      row = (await pool.query(sql('prune_finished_threads'), [options.olderThanDays, batchSize])).rows[0];
    } catch (err) {
      throw wrapDbError(err);
    }
    if (!row?.locked) return report;
    report.threads += Number(row.threads);
    report.jobs += Number(row.jobs);
    report.checkpoints += Number(row.checkpoints);
    report.checkpointBlobs += Number(row.checkpoint_blobs);
    report.checkpointWrites += Number(row.checkpoint_writes);
    report.jobEvents += Number(row.job_events);
    if (Number(row.threads) === 0) {
      report.complete = true;
      return report;
    }
  }
  return report;
}
