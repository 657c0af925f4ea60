import type { Job, Ledger } from '@runledger/ledger';
import type { Queue } from 'bullmq';
import { type DeliveryData, deliver, handOffThread, settleWithin } from './delivery';

/** Why a hand-over to the queue was not confirmed: it failed, or it did not answer in time. */
export type Unconfirmed = { error: string } | { timeoutMs: number };

/**
 * `work` (a hand-over to the queue) as a yes or no: false when it failed or did not answer within
 * `timeoutMs` (none: no limit), after telling `onUnconfirmed`. Never throws: the ledger holds the
 * job, and the reconciler delivers whatever did not reach the queue.
 */
export function bestEffort(work: Promise<unknown>, timeoutMs: number | undefined, onUnconfirmed?: (why: Unconfirmed) => void): Promise<boolean> {
  const attempt = work.then(
    () => true,
    (err: Error) => {
      onUnconfirmed?.({ error: err.message });
      return false;
    },
  );
  if (timeoutMs === undefined) return attempt;
  return settleWithin(attempt, timeoutMs, () => {
    onUnconfirmed?.({ timeoutMs });
    return false;
  });
}

export interface ActionDeps {
  ledger: Ledger;
  queue: Queue<DeliveryData>;
  /** How long the queue follow-up may take before the action answers without it. */
  timeoutMs: number;
  /** Told when a follow-up was not confirmed (to log it), with the job or thread it was for. */
  onUnconfirmed?: (why: Unconfirmed, about: { jobId?: string; threadId?: string }) => void;
}

/** A person's action on a job: the job as the ledger left it, and `enqueued` when the action delivered the job itself. */
export interface ActionResult {
  job: Job;
  enqueued?: boolean;
}

/**
 * The queue's part of every operator action, in one rule: an action that ended the job (cancel,
 * rollback, resolve) hands its thread on to the next job waiting for it; one that left it waiting
 * to run (resume and replay: `accepted`; an upgrade: `accepted` or `recovery_required`) delivers
 * it; a job left parked (an upgrade of an `interrupted` job) needs nothing. Best effort within `timeoutMs`: the reconciler covers the rest.
 */
export async function followUp(deps: ActionDeps, job: Job): Promise<ActionResult> {
  const { ledger, queue, timeoutMs, onUnconfirmed } = deps;
  if (job.status === 'accepted' || job.status === 'recovery_required') {
    const enqueued = await bestEffort(deliver(queue, ledger, job), timeoutMs, (why) => onUnconfirmed?.(why, { jobId: job.jobId }));
    // Read again: the delivery moved its count on.
    return { job: enqueued ? await ledger.get(job.jobId) : job, enqueued };
  }
  if (job.status === 'cancelled' || job.status === 'completed' || job.status === 'failed')
    await bestEffort(handOffThread(queue, ledger, job), timeoutMs, (why) => onUnconfirmed?.(why, { threadId: job.threadId }));
  return { job };
}

/**
 * The operator actions of the API, the dashboard and the CLI: each the ledger's verb, then its
 * `followUp`. The ledger's errors pass through (InvalidTransitionError when the job's state forbids
 * the action, NotFoundError, also for another tenant's job when `tenant` is given).
 */
export function operatorActions(deps: ActionDeps) {
  const { ledger } = deps;
  const then = async (job: Promise<Job>) => followUp(deps, await job);
  return {
    cancel: (jobId: string, tenant?: string, note?: string) => then(ledger.cancel(jobId, tenant, note)),
    /** A cancel that also deletes what the run left on its thread (Ledger.rollback). */
    rollback: (jobId: string, tenant?: string, note?: string) => then(ledger.rollback(jobId, tenant, note)),
    resume: (jobId: string, value: unknown, tenant?: string) => then(ledger.resume(jobId, value, tenant)),
    replay: (jobId: string, tenant?: string, note?: string) => then(ledger.replay(jobId, tenant, note)),
    resolve: (jobId: string, outcome: 'completed' | 'failed', note: string | undefined, tenant?: string) => then(ledger.resolve(jobId, outcome, note, tenant)),
    /** After an upgrade moved the job (Ledger.upgrade): delivered unless it stays parked. */
    upgraded: (job: Job) => followUp(deps, job),
  };
}

export type OperatorActions = ReturnType<typeof operatorActions>;
