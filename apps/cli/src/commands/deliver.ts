import type { Job } from '@runledger/ledger/core';
import { deliver, handOffThread, sendAdmitted, settleWithin } from '@runledger/queue';
import type { CliContext } from '../context';

const DELIVER_TIMEOUT_MS = 3_000;

/**
 * Hands an `accepted` job's next delivery to the queue (for a new admission: the delivery the
 * admission issued), waiting at most 3 s. False when the queue did not take it: the admission
 * stands and a running worker's reconciler delivers it.
 */
export async function deliverSoon(ctx: CliContext, job: Pick<Job, 'jobId' | 'deliveries' | 'deliveryId'>, admitted = false): Promise<boolean> {
  const queue = await ctx.queue();
  const attempt = (admitted ? sendAdmitted(queue, ctx.ledger, [job]) : deliver(queue, ctx.ledger, job)).then(
    () => true,
    () => false,
  );
  return settleWithin(attempt, DELIVER_TIMEOUT_MS, () => false);
}

/**
 * After a job was ended by hand (cancel, resolve): delivers the next job of its thread if it
 * waits for one, within 3 s. False when the queue did not answer: the reconciler delivers it.
 */
export async function handOffSoon(ctx: CliContext, thread: Pick<Job, 'tenant' | 'threadId'>): Promise<boolean> {
  const queue = await ctx.queue();
  const attempt = handOffThread(queue, ctx.ledger, thread).then(
    () => true,
    () => false,
  );
  return settleWithin(attempt, DELIVER_TIMEOUT_MS, () => false);
}

/** The line printed after an admission or a resume: queued, or left for the reconciler. */
export function deliveryLine(ctx: CliContext, enqueued: boolean): string {
  return enqueued
    ? `queued on ${ctx.env.queue.backend === 'redis' ? 'Redis' : 'PostgreSQL'} (BullMQ)`
    : ctx.paint.yellow('not queued: the queue did not answer; a running worker’s reconciler delivers it within a few seconds');
}
