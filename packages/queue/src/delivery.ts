import type { Ledger } from '@runledger/ledger';
import type { Queue } from 'bullmq';

/** The message a delivery carries: a reference, never the payload. */
export interface DeliveryData {
  jobId: string;
}

/** BullMQ job id of a job's n-th delivery: the job id, then `<jobId>-d<n>` (no `:`, never all digits). */
export function deliveryId(jobId: string, n: number): string {
  return n === 0 ? jobId : `${jobId}-d${n}`;
}

const DEFAULT_JOB_OPTIONS = { removeOnComplete: true, removeOnFail: 1000, attempts: 1 } as const;

/**
 * Adds delivery number `deliveries` of a job (optionally delayed) and records it in the ledger.
 * A duplicate delivery is harmless: its claim is refused. Returns the delivery id.
 */
export async function deliver(queue: Queue<DeliveryData>, ledger: Ledger, job: { jobId: string; deliveries: number }, delayMs = 0): Promise<string> {
  const id = deliveryId(job.jobId, job.deliveries);
  await queue.add('run', { jobId: job.jobId }, { ...DEFAULT_JOB_OPTIONS, jobId: id, delay: delayMs > 0 ? delayMs : undefined });
  await ledger.markEnqueued(job.jobId, job.deliveries, id);
  return id;
}

/** `deliver` for many jobs: one `addBulk`, then one ledger statement. Returns the job ids recorded. */
export async function deliverMany(queue: Queue<DeliveryData>, ledger: Ledger, jobs: ReadonlyArray<{ jobId: string; deliveries: number }>): Promise<string[]> {
  if (jobs.length === 0) return [];
  const marks = jobs.map((j) => ({ jobId: j.jobId, deliveries: j.deliveries, deliveryId: deliveryId(j.jobId, j.deliveries) }));
  await queue.addBulk(marks.map((m) => ({ name: 'run', data: { jobId: m.jobId }, opts: { ...DEFAULT_JOB_OPTIONS, jobId: m.deliveryId } })));
  return ledger.markEnqueuedMany(marks);
}

/** States in which a delivery is still on its way to a worker. */
const QUEUED_STATES = new Set(['waiting', 'delayed', 'prioritized', 'waiting-children']);

/** True when the job's last delivery still sits in the queue (so the reconciler need not add another). */
export async function isQueued(queue: Queue<DeliveryData>, id: string | null): Promise<boolean> {
  if (!id) return false;
  return QUEUED_STATES.has(await queue.getJobState(id));
}
