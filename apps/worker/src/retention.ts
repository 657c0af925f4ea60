import { type CheckpointRetention, type Ledger, pruneFinishedThreads, type RetentionReport, RunStreamLog } from '@runledger/ledger';

export interface RetentionTaskOptions {
  /** RETENTION_DAYS: drop job events older than this; prune threads whose every job is terminal and older than this. */
  olderThanDays: number;
  /** RETENTION_CHECKPOINTS: what stays of a pruned thread's checkpoints. Default 'none'. */
  checkpoints?: CheckpointRetention;
  /** Time between passes. Default one hour. */
  intervalMs?: number;
  onReport?: (report: RetentionReport) => void;
  onError?: (err: unknown) => void;
}

/**
 * The worker's periodic retention pass (pruneFinishedThreads, then the stream logs of runs that
 * ended before the same cutoff): the first pass shortly after
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
    const { olderThanDays, checkpoints } = this.options;
    // The stream logs of runs that ended before the same cutoff go too (the LangGraph API's replay buffer).
    const streamLog = new RunStreamLog(this.ledger.pool);
    this.running ??= pruneFinishedThreads(this.ledger.pool, { olderThanDays, checkpoints })
      .then(async (report) => {
        await streamLog.expire(olderThanDays * 86_400_000);
        return report;
      })
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
