import type pg from 'pg';
import { inTransaction, run } from './sql';

/** What retention leaves of a finished thread's LangGraph checkpoints: none, the latest one (state stays readable), or all. */
export type CheckpointRetention = 'none' | 'last' | 'all';

/** What retention does with the job rows of pruned threads: delete them (with their effects, stream logs and sent webhook deliveries) or keep them. */
export type JobRetention = 'delete' | 'keep';

export interface RetentionOptions {
  /** Age in days (> 0; fractions allowed) after which finished threads are pruned and whole days of job events are dropped. */
  olderThanDays: number;
  /** What stays of a pruned thread's checkpoints. Default 'none'. */
  checkpoints?: CheckpointRetention;
  /**
   * 'delete' (the default): the job rows of pruned threads go, with their effects, stream logs and
   * webhook deliveries, once no delivery is pending; under checkpoints 'last' or 'all' each
   * thread's latest job stays (its state is read through it). An idempotency key is then honoured
   * only until `olderThanDays` after its thread finished. 'keep': job rows and effects stay for ever.
   */
  jobs?: JobRetention;
  /** Candidate jobs examined per statement. Default 500. */
  batchSize?: number;
  /** Statements per call, so one call stays short. Default 100. */
  maxBatches?: number;
  /** Longest wait for the lock that dropping a job_events partition takes (ms). Default 2000. */
  lockWaitMs?: number;
}

/** What one retention pass removed. */
export interface RetentionReport {
  threads: number;
  /** Jobs whose threads were pruned (now marked `pruned_at`). */
  jobs: number;
  checkpoints: number;
  checkpointBlobs: number;
  checkpointWrites: number;
  /** Job rows deleted (jobs 'delete'), and with them their effects, stream chunks and webhook deliveries. */
  jobsDeleted: number;
  effects: number;
  streamEvents: number;
  webhookDeliveries: number;
  /** cron_firings rows of times before the cutoff (each cron keeps its latest). */
  cronFirings: number;
  /** Day partitions of job_events dropped. */
  eventPartitions: number;
  /** Events in them (PostgreSQL's estimate: counting would read what is thrown away). */
  jobEvents: number;
  /** False when another process was pruning threads at the same time (this call then removed no checkpoints or jobs), or the batches ran out. */
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
 * coming days' partitions, removes cron firings older than that (each cron keeps its latest),
 * prunes the LangGraph checkpoints (checkpoints, blobs, pending writes) of threads whose every
 * job is terminal and finished more than `olderThanDays` ago, as `checkpoints` says, and then,
 * with `jobs` 'delete' (the default), deletes those threads' job rows with their effects, stream
 * logs and sent webhook deliveries (delete_pruned_jobs.sql says which stay), all in batches;
 * reports what it removed. A thread with any unfinished or recent job keeps everything. Events of
 * a deleted job leave with their day's partition. Safe to call from many processes: one prunes at
 * a time. Throws RangeError for a non-positive age or an unknown policy, LedgerError
 * DATABASE_UNAVAILABLE when PostgreSQL is unreachable (or the partition lock was not had within
 * `lockWaitMs`: the next pass retries).
 */
export async function pruneFinishedThreads(pool: pg.Pool, options: RetentionOptions): Promise<RetentionReport> {
  if (!(options.olderThanDays > 0)) throw new RangeError(`olderThanDays must be a positive number of days, got ${options.olderThanDays}.`);
  const keep = options.checkpoints ?? 'none';
  if (!['none', 'last', 'all'].includes(keep)) throw new RangeError(`checkpoints must be none, last or all, got ${keep}.`);
  const jobs = options.jobs ?? 'delete';
  if (!['delete', 'keep'].includes(jobs)) throw new RangeError(`jobs must be delete or keep, got ${jobs}.`);
  const q = (name: string, values: unknown[]) => run<Record<string, unknown>>(pool, name, values);
  await q('ensure_job_event_partitions', [0, 7]);
  const dropped = (await q('drop_job_event_partitions', [options.olderThanDays, options.lockWaitMs ?? 2_000])).rows[0];
  await forgetEventMinutes(pool);
  const report: RetentionReport = {
    threads: 0,
    jobs: 0,
    checkpoints: 0,
    checkpointBlobs: 0,
    checkpointWrites: 0,
    jobsDeleted: 0,
    effects: 0,
    streamEvents: 0,
    webhookDeliveries: 0,
    cronFirings: 0,
    eventPartitions: num(dropped, 'partitions'),
    jobEvents: num(dropped, 'estimated_rows'),
    complete: false,
  };
  const batchSize = options.batchSize ?? 500;
  const maxBatches = options.maxBatches ?? 100;
  for (let batch = 0; batch < maxBatches; batch++) {
    const n = (await q('prune_cron_firings', [options.olderThanDays, batchSize])).rowCount ?? 0;
    report.cronFirings += n;
    if (n < batchSize) break;
  }
  let threadsDone = false;
  for (let batch = 0; batch < maxBatches && !threadsDone; batch++) {
    const row = (await q('prune_finished_threads', [options.olderThanDays, batchSize, keep])).rows[0];
    if (!row?.locked) return report;
    report.threads += num(row, 'threads');
    report.jobs += num(row, 'jobs');
    report.checkpoints += num(row, 'checkpoints');
    report.checkpointBlobs += num(row, 'checkpoint_blobs');
    report.checkpointWrites += num(row, 'checkpoint_writes');
    threadsDone = num(row, 'threads') === 0;
  }
  if (jobs === 'keep') {
    report.complete = threadsDone;
    return report;
  }
  for (let batch = 0; batch < maxBatches; batch++) {
    const row = (await q('delete_pruned_jobs', [batchSize, keep])).rows[0];
    if (!row?.locked) return report;
    report.jobsDeleted += num(row, 'jobs');
    report.effects += num(row, 'effects');
    report.streamEvents += num(row, 'stream_events');
    report.webhookDeliveries += num(row, 'webhook_deliveries');
    if (num(row, 'jobs') < batchSize) {
      report.complete = threadsDone;
      return report;
    }
  }
  return report;
}
