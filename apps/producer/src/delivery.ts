import type { Job, Ledger } from '@runledger/ledger';
import { type DeliveryData, deliver, queueHas, sendAdmitted, settleWithin as within } from '@runledger/queue';
import type { Queue } from 'bullmq';
import type { FastifyBaseLogger } from 'fastify';

/**
 * Hands a job that is `accepted` in the ledger to the queue (its next delivery), waiting at
 * most `timeoutMs`. Best effort: false when the queue refused or did not answer in time; the
 * worker's reconciler then delivers the job from the ledger. Never throws.
 */
export function deliverWithin(
  queue: Queue<DeliveryData>,
  ledger: Ledger,
  job: Pick<Job, 'jobId' | 'deliveries'>,
  timeoutMs: number,
  log: FastifyBaseLogger,
): Promise<boolean> {
  const attempt = deliver(queue, ledger, { jobId: job.jobId, deliveries: job.deliveries }).then(
    () => true,
    (err: Error) => {
      log.warn({ jobId: job.jobId, err: err.message }, 'queue add failed; the reconciler will deliver the job');
      return false;
    },
  );
  return within(attempt, timeoutMs, () => {
    log.warn({ jobId: job.jobId, timeoutMs }, 'queue add timed out; the reconciler will deliver the job');
    return false;
  });
}

/**
 * Hands new admissions' first deliveries to the queue together (`sendAdmitted`), waiting at most
 * `timeoutMs`. True when the queue took them and their `enqueued` events are written; false when
 * either failed or did not answer in time (the reconciler then delivers from the ledger). Never throws.
 */
export function sendAdmittedWithin(
  queue: Queue<DeliveryData>,
  ledger: Ledger,
  jobs: ReadonlyArray<Pick<Job, 'jobId' | 'deliveryId'>>,
  timeoutMs: number,
  log: FastifyBaseLogger,
): Promise<boolean> {
  const attempt = sendAdmitted(queue, ledger, jobs).then(
    () => true,
    (err: Error) => {
      log.warn({ jobs: jobs.length, err: err.message }, 'delivery not confirmed; the reconciler will deliver');
      return false;
    },
  );
  return within(attempt, timeoutMs, () => {
    log.warn({ jobs: jobs.length, timeoutMs }, 'queue add timed out; the reconciler will deliver');
    return false;
  });
}

/** For a repeated admission: whether the job got past the queue or its delivery is in it (false on any doubt). */
export function deliveredBefore(queue: Queue<DeliveryData>, job: Pick<Job, 'status' | 'deliveryId'>, timeoutMs: number): Promise<boolean> {
  if (job.status !== 'accepted') return Promise.resolve(true);
  return within(
    queueHas(queue, job.deliveryId).catch(() => false),
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
