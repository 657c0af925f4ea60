import { LedgerCore } from './ledger-core';
import type { JobStatus } from './states';
import type { SweepResult } from './types';

/**
 * Most minutes of job_events one rollup step counts (roll_up_event_minutes.sql,
 * backfill_event_minutes.sql): an hour, about 170k events at a million jobs a day of four events
 * each, so a sweep after downtime or during a backfill reads at most that.
 */
const ROLLUP_MINUTES = 60;

/**
 * The fleet's upkeep, run by every worker's reconciler (packages/queue reconciler.ts) and safe with
 * many callers: leases that ran out, jobs with no recent delivery, the per-status counters, the
 * dashboard chart's minutes, the coming days' event partitions, and priority aging.
 */
export class FleetUpkeep extends LedgerCore {
  /** When this process last made sure the coming days' job_events partitions exist (0 = never). */
  private partitionsCheckedAt = 0;

  /** Whether this process should look for events older than the chart rollup's span (at start, then after each minute it counts). */
  private backfillDue = true;

  /**
   * One step of the chart rollup (migration 0017): counts the finished minutes of job_events into
   * event_minutes, at most ROLLUP_MINUTES of them, and when due one chunk of older events not
   * counted yet (a ledger migrated with history). Part of sweep(); safe with many callers (one
   * counts at a time). True while there is more to do now: call again.
   */
  async rollUpEventMinutes(): Promise<boolean> {
    const row = (await this.q('roll_up_event_minutes', [ROLLUP_MINUTES])).rows[0];
    if (Number(row?.rolled) > 0) this.backfillDue = true;
    if (this.backfillDue) this.backfillDue = Boolean((await this.q('backfill_event_minutes', [ROLLUP_MINUTES])).rows[0]?.more);
    return Boolean(row?.behind) || this.backfillDue;
  }

  /**
   * Expired leases → recovery_required; lists jobs with no recent delivery. Also folds the
   * per-status counter rows (so counting stays cheap), counts finished minutes of events for the
   * dashboard's chart (rollUpEventMinutes) and, hourly, creates the coming week's job_events
   * partitions. Safe with many callers.
   */
  async sweep(options: { graceMs?: number; limit?: number } = {}): Promise<SweepResult> {
    const limit = options.limit ?? 500;
    await this.q('fold_ledger_counts', []);
    await this.rollUpEventMinutes();
    if (Date.now() - this.partitionsCheckedAt > 3_600_000) {
      await this.q('ensure_job_event_partitions', [0, 7]);
      this.partitionsCheckedAt = Date.now();
    }
    const expired = (await this.q('expire_leases', [limit])).rows.map((r) => r.job_id as string);
    const undelivered = (await this.q('list_undelivered', [options.graceMs ?? 5_000, limit])).rows.map((r) => ({
      jobId: r.job_id as string,
      deliveries: Number(r.deliveries),
      deliveryId: (r.delivery_id as string | null) ?? null,
      status: r.status as JobStatus,
      graph: r.graph as string,
      tenant: r.tenant as string,
      threadId: r.thread_id as string,
      attempt: Number(r.attempt),
      priority: Number(r.priority),
    }));
    return { expired, undelivered };
  }

  /**
   * Prioritized jobs (priority above 0) waiting longer than `agingMs` since their latest delivery
   * or due time, oldest first: the reconciler raises their deliveries to the front of the queue,
   * then records it with `recordPriorityAged`.
   */
  async agedJobs(agingMs: number, limit = 100): Promise<Array<{ jobId: string; deliveryId: string | null; priority: number }>> {
    return (await this.q('list_aged_jobs', [agingMs, limit])).rows.map((r) => ({
      jobId: r.job_id,
      deliveryId: r.delivery_id ?? null,
      priority: Number(r.priority),
    }));
  }

  /**
   * Records that `jobs` (from `agedJobs`) were raised: their priority becomes 0, what every later
   * delivery carries, and each gets a `priority_aged` event with the priority it had. A job
   * already at 0 (another pass got there first) is left alone. Returns the job ids recorded.
   */
  async recordPriorityAged(jobs: ReadonlyArray<{ jobId: string; priority: number }>, agingMs: number): Promise<string[]> {
    if (jobs.length === 0) return [];
    const rows = (await this.q('record_priority_aged', [jobs.map((j) => j.jobId), jobs.map((j) => j.priority), agingMs])).rows;
    return rows.map((r) => r.job_id as string);
  }
}
