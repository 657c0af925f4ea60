import { type CheckpointRetention, type JobRetention, type Ledger, pruneFinishedThreads, type RetentionReport, RunStreamLog } from '@runledger/ledger';
import { PeriodicPass } from '@runledger/queue';

export interface RetentionTaskOptions {
  /** RETENTION_DAYS: drop job events older than this; prune threads whose every job is terminal and older than this, and old cron firings. */
  olderThanDays: number;
  /** RETENTION_CHECKPOINTS: what stays of a pruned thread's checkpoints. Default 'none'. */
  checkpoints?: CheckpointRetention;
  /** RETENTION_JOBS: delete the job rows of pruned threads (with effects, stream logs, sent webhook deliveries) or keep them. Default 'delete'. */
  jobs?: JobRetention;
  /** Time between passes. Default one hour. */
  intervalMs?: number;
  onReport?: (report: RetentionReport) => void;
  onError?: (err: unknown) => void;
}

/**
 * The worker's periodic retention pass (pruneFinishedThreads, then the stream logs of runs that
 * ended before the same cutoff and whose jobs stay) on a PeriodicPass (never overlapping itself): the first pass
 * shortly after start, then every interval. Every worker may run it; the ledger lets one prune at a time.
 */
export class RetentionTask {
  private readonly pass: PeriodicPass<RetentionReport | undefined>;

  constructor(
    private readonly ledger: Ledger,
    private readonly options: RetentionTaskOptions,
  ) {
    this.pass = new PeriodicPass(
      () => this.prune(),
      options.intervalMs ?? 3_600_000,
      () => {},
    );
  }

  start(): void {
    this.pass.start(Math.min(this.pass.intervalMs, 10_000));
  }

  /** One pass now (overlapping calls share it); undefined when it failed (reported to onError). */
  runOnce(): Promise<RetentionReport | undefined> {
    return this.pass.runOnce();
  }

  stop(): Promise<void> {
    return this.pass.stop();
  }

  private async prune(): Promise<RetentionReport | undefined> {
    const { olderThanDays, checkpoints, jobs } = this.options;
    try {
      const report = await pruneFinishedThreads(this.ledger.pool, { olderThanDays, checkpoints, jobs });
      // The stream logs of runs that ended before the same cutoff go too (the LangGraph API's replay
      // buffer), also of jobs retention keeps (RETENTION_JOBS=keep, or a thread's latest job).
      report.streamEvents += await new RunStreamLog(this.ledger.pool).expire(olderThanDays * 86_400_000);
      this.options.onReport?.(report);
      return report;
    } catch (err) {
      this.options.onError?.(err);
      return undefined;
    }
  }
}
