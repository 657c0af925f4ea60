import type { Job, Ledger } from '@runledger/ledger';
import { type DeliveryData, type DeliveryLabel, deliver, handOffThread, reachedQueue, sendAdmitted, settleWithin as within } from '@runledger/queue';
import type { Queue } from 'bullmq';
import type { FastifyBaseLogger } from 'fastify';

/**
 * `work` (a hand-over to the queue) as a yes or no within `timeoutMs`: false, logged with
 * `fields`, when it failed or did not answer in time; the worker's reconciler then delivers the
 * job from the ledger. Never throws.
 */
function bestEffort(work: Promise<unknown>, timeoutMs: number, log: FastifyBaseLogger, fields: Record<string, unknown>): Promise<boolean> {
  const attempt = work.then(
    () => true,
    (err: Error) => {
      log.warn({ ...fields, err: err.message }, 'delivery not confirmed; the reconciler will deliver');
      return false;
    },
  );
  return within(attempt, timeoutMs, () => {
    log.warn({ ...fields, timeoutMs }, 'queue add timed out; the reconciler will deliver');
    return false;
  });
}

/** Hands a job that is `accepted` in the ledger to the queue (its next delivery), best effort within `timeoutMs`. */
export function deliverWithin(
  queue: Queue<DeliveryData>,
  ledger: Ledger,
  job: Pick<Job, 'jobId' | 'deliveries'> & Partial<DeliveryLabel>,
  timeoutMs: number,
  log: FastifyBaseLogger,
): Promise<boolean> {
  return bestEffort(deliver(queue, ledger, job), timeoutMs, log, { jobId: job.jobId });
}

/**
 * After a person ended a job (cancel, resolve): delivers the next job of its thread if it waits
 * for one (handOffThread), best effort within `timeoutMs`; the reconciler covers a failure.
 */
export function handOffWithin(
  queue: Queue<DeliveryData>,
  ledger: Ledger,
  thread: Pick<Job, 'tenant' | 'threadId'>,
  timeoutMs: number,
  log: FastifyBaseLogger,
): Promise<boolean> {
  return bestEffort(handOffThread(queue, ledger, thread), timeoutMs, log, { threadId: thread.threadId });
}

/**
 * Hands new admissions' first deliveries to the queue together (`sendAdmitted`), best effort
 * within `timeoutMs`: true when the queue took them and their `enqueued` events are written.
 */
export function sendAdmittedWithin(
  queue: Queue<DeliveryData>,
  ledger: Ledger,
  jobs: ReadonlyArray<Pick<Job, 'jobId' | 'deliveryId'> & Partial<DeliveryLabel>>,
  timeoutMs: number,
  log: FastifyBaseLogger,
): Promise<boolean> {
  return bestEffort(sendAdmitted(queue, ledger, jobs), timeoutMs, log, { jobs: jobs.length });
}

/** For a repeated admission: `reachedQueue` within `timeoutMs` (false on any doubt). */
export function deliveredBefore(
  queue: Queue<DeliveryData>,
  ledger: Ledger,
  job: Pick<Job, 'jobId' | 'status' | 'deliveryId'>,
  timeoutMs: number,
): Promise<boolean> {
  return within(
    reachedQueue(queue, ledger, job).catch(() => false),
    timeoutMs,
    () => false,
  );
}

/** True when the queue answers a cheap read within `timeoutMs` (for /readyz). */
export function queueReachable(queue: Queue<DeliveryData>, timeoutMs: number): Promise<boolean> {
  const probe = queue.getJobCounts('waiting').then(
    () => true,
    () => false,
  );
  return within(probe, timeoutMs, () => false);
}
