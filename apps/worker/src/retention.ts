import { type Ledger, pruneFinishedThreads, type RetentionReport } from '@runledger/ledger';

export interface RetentionTaskOptions {
  /** RETENTION_DAYS: prune threads whose every job is terminal and older than this. */
  olderThanDays: number;
  /** Time between passes. Default one hour. */
  intervalMs?: number;
  onReport?: (report: RetentionReport) => void;
  onError?: (err: unknown) => void;
}

/**
 * The worker's periodic retention pass (pruneFinishedThreads): the first pass shortly after
 * start, then every interval. Every worker may run it; the ledger lets one prune at a time.
 */
export class RetentionTask {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<RetentionReport | undefined> | undefined;

  constructor(
    private readonly ledger: Ledger,
    private readonly options: RetentionTaskOptions,
  ) {}

  start(): void {
    if (this.timer) return;
    const every = this.options.intervalMs ?? 3_600_000;
    const tick = () => {
      void this.runOnce();
      this.timer = setTimeout(tick, every);
    };
    this.timer = setTimeout(tick, Math.min(every, 10_000));
  }

  /** One pass now (overlapping calls share it); undefined when it failed (reported to onError). */
  runOnce(): Promise<RetentionReport | undefined> {
    this.running ??= pruneFinishedThreads(this.ledger.pool, { olderThanDays: this.options.olderThanDays })
      .then(
        (report) => {
          this.options.onReport?.(report);
          return report;
        },
        (err: unknown) => {
          this.options.onError?.(err);
          return undefined;
        },
      )
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
