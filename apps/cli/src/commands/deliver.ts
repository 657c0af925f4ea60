import type { Job } from '@runledger/ledger/core';
import { bestEffort, deliver, type OperatorActions, operatorActions, sendAdmitted } from '@runledger/queue';
import type { CliContext } from '../context';

const DELIVER_TIMEOUT_MS = 3_000;

/**
 * Hands an `accepted` job's next delivery to the queue (for a new admission: the delivery the
 * admission issued), waiting at most 3 s. False when the queue did not take it: the admission
 * stands and a running worker's reconciler delivers it.
 */
export async function deliverSoon(ctx: CliContext, job: Pick<Job, 'jobId' | 'deliveries' | 'deliveryId'>, admitted = false): Promise<boolean> {
  const queue = await ctx.queue();
  return bestEffort(admitted ? sendAdmitted(queue, ctx.ledger, [job]) : deliver(queue, ctx.ledger, job), DELIVER_TIMEOUT_MS);
}

/** The operator actions with their queue follow-up (at most 3 s; the reconciler covers a queue that did not answer). */
export async function actionsOf(ctx: CliContext): Promise<OperatorActions> {
  return operatorActions({ ledger: ctx.ledger, queue: await ctx.queue(), timeoutMs: DELIVER_TIMEOUT_MS });
}

/** The line printed after an admission or a resume: queued, or left for the reconciler. */
export function deliveryLine(ctx: CliContext, enqueued: boolean): string {
  return enqueued
    ? `queued on ${ctx.env.queue.backend === 'redis' ? 'Redis' : 'PostgreSQL'} (BullMQ)`
    : ctx.paint.yellow('not queued: the queue did not answer; a running worker’s reconciler delivers it within a few seconds');
}
