import type { Ledger } from '@runledger/ledger';
import { type DeliveryData, settleWithin } from '@runledger/queue';
import type { GraphDefinition, GraphRegistry } from '@runledger/runtime';
import type { Job as BullJob } from 'bullmq';
import type { DeliveryOutcome } from './execute';

/** What a running delivery shows as its BullMQ progress (Bull Board's Progress tab). */
export interface DeliveryProgress {
  stage: string;
  attempt?: number;
  /** Checkpoints the run saved: LangGraph supersteps. */
  steps: number;
  effects: { started: number; settled: number };
}

/** Ledger writes shown in a delivery's log, with the line each one becomes (null: none). */
const TIMELINE: Record<string, (args: unknown[], result: unknown) => string | null> = {
  claim: (_, r) => {
    const c = r as { ok: boolean; reason?: string; job?: { attempt: number; fencingToken: number } };
    return c.ok ? `claimed: attempt ${c.job?.attempt}, fencing token ${c.job?.fencingToken}` : `claim refused: ${c.reason}`;
  },
  claimLimited: (_, r) => {
    const c = r as { ok: boolean; reason?: string; dueInMs?: number; job?: { attempt: number; fencingToken: number } };
    if (c.ok) return `claimed: attempt ${c.job?.attempt}, fencing token ${c.job?.fencingToken}`;
    return c.reason === 'rate_limited'
      ? `held back by its graph's rate limit: waits in the queue, tries again in ${c.dueInMs} ms`
      : `claim refused: ${c.reason}`;
  },
  waitForThread: (_, r) => (r ? `waiting_for_thread: blocked by ${r}` : null),
  appendEvent: ([, , type, detail]) => `${type}${describe(detail)}`,
  recordEffectIntent: ([, , key, name]) => `effect started: ${name} (${key})`,
  settleEffect: ([, , key, outcome]) => `effect ${outcome && typeof outcome === 'object' && 'error' in outcome ? 'failed' : 'committed'}: ${key}`,
  complete: () => 'completed',
  fail: () => 'failed',
  park: () => 'interrupted: waiting for a resume',
  release: ([, , reason]) => `recovery_required: released (${reason ?? 'drained'})`,
  retryLater: ([, , , delayMs]) => `recovery_required: retry in ${delayMs} ms`,
  requireManual: ([, , reason]) => `manual_reconcile: ${reason}`,
};

function describe(detail: unknown): string {
  if (!detail || typeof detail !== 'object') return '';
  const d = detail as Record<string, unknown>;
  const said = ['node', 'reason', 'decision'].filter((k) => typeof d[k] === 'string').map((k) => `${k} ${d[k]}`);
  return said.length > 0 ? `: ${said.join(', ')}` : '';
}

/**
 * One delivery's Bull Board view, fed by what the run writes to the ledger: its log gets the
 * timeline lines as they happen, its progress the stage, steps and effects. Writes are batched
 * (one `log` and one `updateProgress` per `batchMs`) and never throw: Redis trouble costs the
 * view a few lines, never the run.
 */
export class DeliveryView {
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

  /** The ledger as this delivery's run sees it: every write also feeds the view. */
  watchLedger(ledger: Ledger): Ledger {
    return new Proxy(ledger, {
      get: (target, prop) => {
        const value = Reflect.get(target, prop);
        if (typeof value !== 'function') return value;
        const line = TIMELINE[prop as string];
        return (...args: unknown[]) => {
          const result = value.apply(target, args);
          if (!line) return result;
          return Promise.resolve(result).then((r) => {
            this.record(prop as string, args, r, line(args, r));
            return r;
          });
        };
      },
    });
  }

  /** The graphs as this delivery's run builds them: each saved checkpoint counts a step. */
  watchGraphs(graphs: GraphRegistry): GraphRegistry {
    const watched = new Map<string, GraphDefinition>();
    for (const [name, def] of graphs)
      watched.set(name, {
        ...def,
        build: (saver) => {
          const put = saver.put.bind(saver);
          saver.put = async (...args: Parameters<typeof put>) => {
            const saved = await put(...args);
            this.update({ steps: this.progress.steps + 1, stage: 'running' });
            return saved;
          };
          return def.build(saver);
        },
      });
    return watched;
  }

  private record(method: string, args: unknown[], result: unknown, line: string | null): void {
    if (method === 'claim') {
      const c = result as { ok: boolean; reason?: string; job?: { attempt: number } };
      this.update(c.ok ? { stage: 'claimed', attempt: c.job?.attempt } : { stage: `refused: ${c.reason}` });
      this.claimedAttempt = c.job?.attempt;
    } else if (method === 'recordEffectIntent') {
      this.update({ effects: { ...this.progress.effects, started: this.progress.effects.started + 1 } });
    } else if (method === 'settleEffect') {
      this.update({ effects: { ...this.progress.effects, settled: this.progress.effects.settled + 1 } });
    } else if (method === 'appendEvent' && typeof args[2] === 'string') {
      this.update({ stage: args[2] });
    }
    if (line) this.note(line);
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
