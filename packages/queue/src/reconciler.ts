import type { Ledger } from '@runledger/ledger';
import type { Queue } from 'bullmq';
import { type DeliveryData, deliver, isQueued } from './delivery';
import { PeriodicPass } from './periodic-pass';

export interface ReconcilerOptions {
  /** Time between sweeps. Default 1000 ms. */
  intervalMs?: number;
  /** How long an accepted job may go without a recorded delivery before it is checked. Default 5000 ms. */
  graceMs?: number;
  log?: (level: 'info' | 'warn', msg: string, fields?: Record<string, unknown>) => void;
}

export interface SweepReport {
  expired: number;
  redelivered: number;
  stillQueued: number;
}

/**
 * Rebuilds deliveries from the ledger, the source of truth: expired leases become
 * recovery_required and are delivered at once; accepted or due jobs whose last delivery is no
 * longer waiting in the queue (producer died before `add`, Redis was flushed) are delivered
 * again. Runs in every worker; the ledger's SKIP LOCKED and delivery counter keep it idempotent.
 */
export class Reconciler {
  private readonly sweeps: PeriodicPass<SweepReport>;
  readonly intervalMs: number;

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
    const { expired, undelivered } = await this.ledger.sweep({ graceMs: this.options.graceMs ?? 5_000 });
    const report: SweepReport = { expired: expired.length, redelivered: 0, stillQueued: 0 };
    const expiredSet = new Set(expired);
    for (const job of undelivered) {
      if (!expiredSet.has(job.jobId) && (await isQueued(this.queue, job.deliveryId))) {
        report.stillQueued++;
        continue;
      }
      await deliver(this.queue, this.ledger, job);
      report.redelivered++;
    }
    for (const jobId of expired) {
      if (undelivered.some((u) => u.jobId === jobId)) continue;
      await deliver(this.queue, this.ledger, await this.ledger.get(jobId));
      report.redelivered++;
    }
    if (report.expired || report.redelivered) this.options.log?.('info', 'reconciler sweep', { ...report });
    return report;
  }
}
