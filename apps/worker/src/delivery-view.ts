import type { ClaimResult } from '@runledger/ledger';
import { type DeliveryData, settleWithin } from '@runledger/queue';
import type { Job as BullJob } from 'bullmq';
import type { DeliveryOutcome } from './delivery-outcome';
import type { RunObserver } from './run-observer';

/** What a running delivery shows as its BullMQ progress (Bull Board's Progress tab). */
export interface DeliveryProgress {
  stage: string;
  attempt?: number;
  /** Checkpoints the run saved: LangGraph supersteps. */
  steps: number;
  effects: { started: number; settled: number };
}

/** The line a delivery's end adds to its log (null: none beyond what the run wrote). */
function endLine(o: DeliveryOutcome): string | null {
  switch (o.outcome) {
    case 'completed':
      return 'completed';
    case 'failed':
      return 'failed';
    case 'interrupted':
      return 'interrupted: waiting for a resume';
    case 'released':
      return `recovery_required: released (${o.reason ?? 'drained'})`;
    case 'retry':
      return `recovery_required: retry in ${o.retryInMs} ms`;
    case 'manual_reconcile':
      return `manual_reconcile: ${o.reason}`;
    case 'lease_lost':
      return 'lease lost: stopped without further writes; another delivery owns the job';
    default:
      return null;
  }
}

function describe(detail: Record<string, unknown>): string {
  const said = ['node', 'reason', 'decision'].filter((k) => typeof detail[k] === 'string').map((k) => `${k} ${detail[k]}`);
  return said.length > 0 ? `: ${said.join(', ')}` : '';
}

/**
 * One delivery's Bull Board view, the observer of its run (RunObserver): its log gets the
 * timeline lines as the run's ledger writes happen, its progress the stage, steps and effects. Writes are batched
 * (one `log` and one `updateProgress` per `batchMs`) and never throw: Redis trouble costs the
 * view a few lines, never the run.
 */
export class DeliveryView implements RunObserver {
  private pending: string[] = [];
  private progress: DeliveryProgress = { stage: 'claiming', steps: 0, effects: { started: 0, settled: 0 } };
  private progressChanged = false;
  /** The attempt the claim took, once, for the delivery's data (which said the ledger's count when it was added). */
  private claimedAttempt: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  /** Writes to the queue that failed (and were dropped). */
  failedWrites = 0;

  constructor(
    private readonly delivery: BullJob<DeliveryData>,
    private readonly batchMs = 250,
  ) {}

  claimed(claim: ClaimResult, limited: boolean): void {
    if (claim.ok) {
      this.claimedAttempt = claim.job.attempt;
      this.update({ stage: 'claimed', attempt: claim.job.attempt });
      this.note(`claimed: attempt ${claim.job.attempt}, fencing token ${claim.job.fencingToken}`);
      return;
    }
    this.update({ stage: `refused: ${claim.reason}` });
    this.note(
      limited && claim.reason === 'rate_limited'
        ? `held back by its graph's rate limit: waits in the queue, tries again in ${claim.dueInMs} ms`
        : `claim refused: ${claim.reason}`,
    );
  }

  waitingForThread(blockedBy: string | null): void {
    if (blockedBy) this.note(`waiting_for_thread: blocked by ${blockedBy}`);
  }

  event(type: string, detail: Record<string, unknown>): void {
    this.update({ stage: type });
    this.note(`${type}${describe(detail)}`);
  }

  effectStarted(effectKey: string, name: string): void {
    this.update({ effects: { ...this.progress.effects, started: this.progress.effects.started + 1 } });
    this.note(`effect started: ${name} (${effectKey})`);
  }

  effectSettled(effectKey: string, failed: boolean): void {
    this.update({ effects: { ...this.progress.effects, settled: this.progress.effects.settled + 1 } });
    this.note(`effect ${failed ? 'failed' : 'committed'}: ${effectKey}`);
  }

  checkpoint(): void {
    this.update({ steps: this.progress.steps + 1, stage: 'running' });
  }

  /** Adds a timeline line (timestamped now) to the next batch. */
  note(line: string): void {
    this.pending.push(`${new Date().toISOString()} ${line}`);
    this.schedule();
  }

  private update(patch: Partial<DeliveryProgress>): void {
    this.progress = { ...this.progress, ...patch };
    this.progressChanged = true;
    this.schedule();
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.batchMs);
    this.timer.unref();
  }

  /** Writes what is pending now; one batch at a time, so log lines keep their order. */
  flush(): Promise<void> {
    this.writing = this.writing.then(() => this.write());
    return this.writing;
  }

  private async write(): Promise<void> {
    const lines = this.pending.splice(0);
    const progress = this.progressChanged ? this.progress : undefined;
    this.progressChanged = false;
    const attempt = this.claimedAttempt;
    this.claimedAttempt = undefined;
    // Independent writes, sent together: one round trip's wait per batch, not three.
    const writes = [
      attempt === undefined ? undefined : this.delivery.updateData({ ...this.delivery.data, attempt }),
      lines.length === 0 ? undefined : this.delivery.log(lines.join('\n')),
      progress === undefined ? undefined : this.delivery.updateProgress({ ...progress }),
    ];
    for (const result of await Promise.allSettled(writes)) if (result.status === 'rejected') this.failedWrites++;
  }

  /** Writes the delivery's last lines and progress, waiting at most `timeoutMs` for the queue. */
  async finish(outcome: DeliveryOutcome, timeoutMs = 1_000): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const line = endLine(outcome);
    if (line) this.note(line);
    this.update({ stage: outcome.outcome });
    await settleWithin(this.flush(), timeoutMs, () => undefined);
  }
}

const SUMMARIES: Record<Exclude<DeliveryOutcome['outcome'], 'refused'>, string> = {
  completed: 'ran: the job completed',
  failed: 'ran: the job failed',
  interrupted: 'ran: the job stopped at an interrupt and waits for a resume',
  manual_reconcile: 'ran: the job stopped for a person (manual_reconcile)',
  retry: 'ran: the attempt failed; the job is retried by a later delivery',
  released: 'ran: the worker stopped and handed the job back; a later delivery resumes it',
  lease_lost: 'ran: the lease was lost; another delivery owns the job',
  database_unreachable: 'stopped: PostgreSQL was unreachable, nothing more was written; the reconciler recovers the job when its lease expires',
  database_disk_full: "stopped: PostgreSQL's disk was full, nothing more was written; the reconciler recovers the job once space is freed",
};

/** The delivery's BullMQ return value: its outcome with one sentence saying what it means. */
export function readableOutcome(o: DeliveryOutcome): DeliveryOutcome & { summary: string } {
  if (o.outcome !== 'refused') return { ...o, summary: SUMMARIES[o.outcome] };
  if (o.reason === 'thread_busy')
    return {
      ...o,
      summary: o.blockedBy
        ? `not run: job ${o.blockedBy} holds the thread; this job waits in the ledger and is delivered when that one ends`
        : 'not run: the thread was busy; the reconciler delivers the job once it is free',
    };
  return { ...o, summary: `not run: the ledger refused the claim (${o.reason}); this delivery had nothing to do` };
}
