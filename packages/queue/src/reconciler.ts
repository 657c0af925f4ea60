import type { Ledger } from '@runledger/ledger';
import type { Queue } from 'bullmq';
import { type DeliveryData, deliver, isQueuedOrTaken } from './delivery';
import { PeriodicPass } from './periodic-pass';

export interface ReconcilerOptions {
  /** Time between sweeps. Default 1000 ms. */
  intervalMs?: number;
  /** How long an accepted job may go without a recorded delivery before it is checked. Default 5000 ms. */
  graceMs?: number;
  /**
   * Priority aging: a prioritized job waiting longer than this (since its latest delivery or due
   * time) is moved to the front of the queue, ahead of every prioritized job (BullMQ's
   * `changePriority` to 0), and keeps priority 0 in the ledger. Checked every max(intervalMs,
   * priorityAgingMs / 10). Default 0: off (the worker turns it on, PRIORITY_AGING_MS).
   */
  priorityAgingMs?: number;
  log?: (level: 'info' | 'warn', msg: string, fields?: Record<string, unknown>) => void;
}

export interface SweepReport {
  expired: number;
  redelivered: number;
  stillQueued: number;
  /** Jobs raised to the front of the queue by priority aging in this sweep. */
  aged: number;
  /** Listed jobs that a worker claimed (or someone delivered) while the sweep checked the list. */
  claimedMeanwhile: number;
}

/** The states a job waits for a delivery in (list_undelivered.sql). */
const UNDELIVERED: ReadonlySet<string> = new Set(['accepted', 'recovery_required']);

/** Jobs one aging pass raises at most; the rest wait for the next pass. */
const AGING_BATCH = 100;

/**
 * Rebuilds deliveries from the ledger, the source of truth: expired leases become
 * recovery_required and are delivered at once; accepted or due jobs whose last delivery is no
 * longer waiting in the queue (producer died before `add`, Redis was flushed) are delivered
 * again. Runs in every worker; the ledger's SKIP LOCKED and delivery counter keep it idempotent.
 */
export class Reconciler {
  private readonly sweeps: PeriodicPass<SweepReport>;
  readonly intervalMs: number;
  /** When the last aging pass ran (ms since the epoch). */
  private agedAt = 0;

  constructor(
    private readonly ledger: Ledger,
    private readonly queue: Queue<DeliveryData>,
    private readonly options: ReconcilerOptions = {},
  ) {
    this.intervalMs = options.intervalMs ?? 1_000;
    this.sweeps = new PeriodicPass(
      () => this.sweep(),
      this.intervalMs,
      (err) => this.options.log?.('warn', 'reconciler sweep failed', { error: (err as Error).message }),
    );
  }

  start(): void {
    this.sweeps.start();
  }

  stop(): Promise<void> {
    return this.sweeps.stop();
  }

  /** One sweep now (overlapping calls share the one in flight). */
  sweepOnce(): Promise<SweepReport> {
    return this.sweeps.runOnce();
  }

  private async sweep(): Promise<SweepReport> {
    const { expired, undelivered } = await this.ledger.upkeep.sweep({ graceMs: this.options.graceMs ?? 5_000 });
    const report: SweepReport = { expired: expired.length, redelivered: 0, stillQueued: 0, aged: 0, claimedMeanwhile: 0 };
    const expiredSet = new Set(expired);
    for (const job of undelivered) {
      // An expired lease is delivered at once; any other listed job only when it still waits.
      if (!expiredSet.has(job.jobId)) {
        if (await isQueuedOrTaken(this.queue, job.deliveryId)) {
          report.stillQueued++;
          continue;
        }
        if (!(await this.stillWaiting(job))) {
          report.claimedMeanwhile++;
          continue;
        }
      }
      await deliver(this.queue, this.ledger, job);
      report.redelivered++;
    }
    for (const jobId of expired) {
      if (undelivered.some((u) => u.jobId === jobId)) continue;
      await deliver(this.queue, this.ledger, await this.ledger.get(jobId));
      report.redelivered++;
    }
    report.aged = await this.agePriorities();
    if (report.expired || report.redelivered || report.aged) this.options.log?.('info', 'reconciler sweep', { ...report });
    return report;
  }

  /**
   * Whether a listed job still waits for the delivery it was listed with. The list is a snapshot,
   * checked against the queue one round trip per job, so a job listed while it waited in a backlog
   * may have been claimed and run since, its delivery finished. A claim commits before its
   * delivery finishes, so this read, made after the queue said the delivery is gone, shows it.
   */
  private async stillWaiting(listed: { jobId: string; deliveries: number }): Promise<boolean> {
    const now = await this.ledger.get(listed.jobId);
    return UNDELIVERED.has(now.status) && now.deliveries === listed.deliveries;
  }

  /**
   * Priority aging, at most every max(intervalMs, priorityAgingMs / 10): the deliveries of jobs
   * prioritized and waiting longer than the bound move to the end of BullMQ's wait list (priority
   * 0), ahead of every prioritized job, then the ledger records it. Queue first, ledger second: a
   * crash between them leaves the job at 0 in the queue and the next pass records it (a delivery
   * already at 0 is not moved again, so it keeps its place). BullMQ has no aging of its own.
   */
  private async agePriorities(): Promise<number> {
    const agingMs = this.options.priorityAgingMs ?? 0;
    if (agingMs <= 0 || Date.now() - this.agedAt < Math.max(this.intervalMs, agingMs / 10)) return 0;
    this.agedAt = Date.now();
    const aged = await this.ledger.upkeep.agedJobs(agingMs, AGING_BATCH);
    for (const job of aged) {
      const delivery = job.deliveryId ? await this.queue.getJob(job.deliveryId) : undefined;
      // Gone (flushed, or a thread wait dropped it): the job's next delivery carries the ledger's 0.
      if (!delivery || !(delivery.priority > 0)) continue;
      await delivery.changePriority({ priority: 0 }).catch((err: Error) => {
        this.options.log?.('warn', 'priority aging: changePriority failed', { jobId: job.jobId, error: err.message });
      });
    }
    return (await this.ledger.upkeep.recordPriorityAged(aged, agingMs)).length;
  }
}
