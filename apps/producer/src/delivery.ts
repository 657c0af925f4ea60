import type { Job, Ledger } from '@runledger/ledger';
import { type DeliveryData, deliver } from '@runledger/queue';
import type { Queue } from 'bullmq';
import type { FastifyBaseLogger } from 'fastify';

/**
 * Hands a job that is `accepted` in the ledger to the queue (its next delivery), waiting at
 * most `timeoutMs`. Best effort: false when the queue refused or did not answer in time; the
 * worker's reconciler then delivers the job from the ledger. Never throws.
 */
export async function deliverWithin(
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
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => {
      log.warn({ jobId: job.jobId, timeoutMs }, 'queue add timed out; the reconciler will deliver the job');
      resolve(false);
    }, timeoutMs);
  });
  try {
    return await Promise.race([attempt, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** True when the queue answers a cheap read within `timeoutMs` (for /readyz). */
export async function queueReachable(queue: Queue<DeliveryData>, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  const probe = queue.getJobCounts('waiting').then(
    () => true,
    () => false,
  );
  try {
    return await Promise.race([probe, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
