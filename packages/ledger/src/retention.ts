import type pg from 'pg';
import { inTransaction, run } from './sql';

/** What retention leaves of a finished thread's LangGraph checkpoints: none, the latest one (state stays readable), or all. */
export type CheckpointRetention = 'none' | 'last' | 'all';

export interface RetentionOptions {
  /** Age in days (> 0; fractions allowed) after which finished threads are pruned and whole days of job events are dropped. */
  olderThanDays: number;
  /** What stays of a pruned thread's checkpoints. Default 'none'. */
  checkpoints?: CheckpointRetention;
  /** Candidate jobs examined per statement. Default 500. */
  batchSize?: number;
  /** Statements per call, so one call stays short. Default 100. */
  maxBatches?: number;
  /** Longest wait for the lock that dropping a job_events partition takes (ms). Default 2000. */
  lockWaitMs?: number;
}

/** What one retention pass removed. Job rows and effects are never removed; jobs are marked pruned. */
export interface RetentionReport {
  threads: number;
  /** Jobs whose threads were pruned (now marked `pruned_at`). */
  jobs: number;
  checkpoints: number;
  checkpointBlobs: number;
  checkpointWrites: number;
  /** Day partitions of job_events dropped. */
  eventPartitions: number;
  /** Events in them (PostgreSQL's estimate: counting would read what is thrown away). */
  jobEvents: number;
  /** False when another process was pruning threads at the same time (this call then removed no checkpoints). */
  complete: boolean;
}

const num = (row: Record<string, unknown> | undefined, key: string) => Number(row?.[key] ?? 0);

/**
 * The chart's counted minutes of days whose job_events partitions are gone go too
 * (forget_event_minutes.sql), under the rollup's lock so no sweep counts a minute meanwhile.
 */
async function forgetEventMinutes(pool: pg.Pool): Promise<void> {
  await inTransaction(pool, async (client) => {
    await run(client, 'lock_event_minutes');
    await run(client, 'forget_event_minutes');
  });
}

/**
 * Retention at any ledger size: drops the day partitions of job_events older than
 * `olderThanDays` (no row deletes) and the chart's counted minutes of those days, creates the
 * coming days' partitions, and prunes the LangGraph checkpoints (checkpoints, blobs, pending
 * writes) of threads whose every job is terminal and
 * finished more than `olderThanDays` ago, as `checkpoints` says, in batches; reports what it
 * removed. Job rows (the permanent idempotency receipts) and effects (the proof a provider was
 * called, which a replay's idempotency key relies on) stay; a thread with any unfinished or
 * recent job keeps its checkpoints. Safe to call from many processes: one prunes at a time.
 * Throws RangeError for a non-positive age, LedgerError DATABASE_UNAVAILABLE when PostgreSQL is
 * unreachable (or the partition lock was not had within `lockWaitMs`: the next pass retries).
 */
export async function pruneFinishedThreads(pool: pg.Pool, options: RetentionOptions): Promise<RetentionReport> {
  if (!(options.olderThanDays > 0)) throw new RangeError(`olderThanDays must be a positive number of days, got ${options.olderThanDays}.`);
  const keep = options.checkpoints ?? 'none';
  if (!['none', 'last', 'all'].includes(keep)) throw new RangeError(`checkpoints must be none, last or all, got ${keep}.`);
  const q = async (name: string, values: unknown[]) => (await run(pool, name, values)).rows[0] as Record<string, unknown> | undefined;
  await q('ensure_job_event_partitions', [0, 7]);
  const dropped = await q('drop_job_event_partitions', [options.olderThanDays, options.lockWaitMs ?? 2_000]);
  await forgetEventMinutes(pool);
  const report: RetentionReport = {
    threads: 0,
    jobs: 0,
    checkpoints: 0,
    checkpointBlobs: 0,
    checkpointWrites: 0,
    eventPartitions: num(dropped, 'partitions'),
    jobEvents: num(dropped, 'estimated_rows'),
    complete: keep === 'all',
  };
  if (keep === 'all') return report;
  const batchSize = options.batchSize ?? 500;
  for (let batch = 0; batch < (options.maxBatches ?? 100); batch++) {
    const row = await q('prune_finished_threads', [options.olderThanDays, batchSize, keep]);
    if (!row?.locked) return report;
    report.threads += num(row, 'threads');
    report.jobs += num(row, 'jobs');
    report.checkpoints += num(row, 'checkpoints');
    report.checkpointBlobs += num(row, 'checkpoint_blobs');
    report.checkpointWrites += num(row, 'checkpoint_writes');
    if (num(row, 'threads') === 0) {
      report.complete = true;
      return report;
    }
  }
  return report;
}
