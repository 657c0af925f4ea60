import type { Job, Ledger } from '@runledger/ledger';
import {
  bestEffort,
  type DeliveryData,
  type DeliveryLabel,
  deliver,
  type OperatorActions,
  operatorActions,
  reachedQueue,
  sendAdmitted,
  type Unconfirmed,
  settleWithin as within,
} from '@runledger/queue';
import type { Queue } from 'bullmq';
import type { FastifyBaseLogger } from 'fastify';

/** Logs a hand-over the queue did not confirm, with `fields`: the worker's reconciler delivers the job from the ledger. */
export function logUnconfirmed(log: FastifyBaseLogger, fields: Record<string, unknown>) {
  return (why: Unconfirmed) =>
    'timeoutMs' in why
      ? log.warn({ ...fields, timeoutMs: why.timeoutMs }, 'queue add timed out; the reconciler will deliver')
      : log.warn({ ...fields, err: why.error }, 'delivery not confirmed; the reconciler will deliver');
}

/** The operator actions (cancel, resume, replay, resolve, rollback, upgrade) with their queue follow-up, logged on `log`. */
export function actionsFor(deps: { ledger: Ledger; queue: Queue<DeliveryData>; enqueueTimeoutMs: number }, log: FastifyBaseLogger): OperatorActions {
  return operatorActions({
    ledger: deps.ledger,
    queue: deps.queue,
    timeoutMs: deps.enqueueTimeoutMs,
    onUnconfirmed: (why, about) => logUnconfirmed(log, about)(why),
  });
}

const bestEffortLogged = (work: Promise<unknown>, timeoutMs: number, log: FastifyBaseLogger, fields: Record<string, unknown>) =>
  bestEffort(work, timeoutMs, logUnconfirmed(log, fields));

/** Hands a job that is `accepted` in the ledger to the queue (its next delivery), best effort within `timeoutMs`. */
export function deliverWithin(
  queue: Queue<DeliveryData>,
  ledger: Ledger,
  job: Pick<Job, 'jobId' | 'deliveries'> & Partial<DeliveryLabel>,
  timeoutMs: number,
  log: FastifyBaseLogger,
): Promise<boolean> {
  return bestEffortLogged(deliver(queue, ledger, job), timeoutMs, log, { jobId: job.jobId });
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
  return bestEffortLogged(sendAdmitted(queue, ledger, jobs), timeoutMs, log, { jobs: jobs.length });
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
