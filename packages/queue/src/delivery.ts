import type { Delivered, Job, Ledger } from '@runledger/ledger';
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

/**
 * Hands new admissions' first deliveries (issued by the admission itself, id = the job's
 * `deliveryId`) to the queue with one `add` or `addBulk`, then records their `enqueued` events.
 * Throws when the queue refused; the reconciler then issues the next delivery of each.
 */
export async function sendAdmitted(
  queue: Queue<DeliveryData>,
  ledger: Ledger,
  jobs: ReadonlyArray<{ jobId: string; deliveryId: string | null }>,
): Promise<void> {
  if (jobs.length === 0) return;
  const delivered = jobs.map((j) => ({ jobId: j.jobId, deliveryId: j.deliveryId ?? j.jobId }));
  if (delivered.length === 1) {
    const [d] = delivered as [Delivered];
    await queue.add('run', { jobId: d.jobId }, { ...DEFAULT_JOB_OPTIONS, jobId: d.deliveryId });
  } else {
    await queue.addBulk(delivered.map((d) => ({ name: 'run', data: { jobId: d.jobId }, opts: { ...DEFAULT_JOB_OPTIONS, jobId: d.deliveryId } })));
  }
  await ledger.recordEnqueued(delivered);
}

/** States in which a delivery is still on its way to a worker. */
const QUEUED_STATES = new Set(['waiting', 'delayed', 'prioritized', 'waiting-children']);

/** True when the queue holds delivery `id` in any state (waiting, active, finished and kept …). */
export async function queueHas(queue: Queue<DeliveryData>, id: string | null): Promise<boolean> {
  return id !== null && (await queue.getJobState(id)) !== 'unknown';
}

/**
 * For a job admitted earlier (a repeated submission): true once it left `accepted`, while the
 * queue holds its latest delivery, or while it waits for its thread (a worker dropped its
 * delivery, and the job that ends before it delivers it: it needs none until then); false when
 * its delivery never reached the queue.
 */
export async function reachedQueue(
  queue: Queue<DeliveryData>,
  ledger: Ledger,
  job: { jobId: string; status: string; deliveryId: string | null },
): Promise<boolean> {
  if (job.status !== 'accepted' || (await queueHas(queue, job.deliveryId))) return true;
  return (await ledger.get(job.jobId)).blockedBy !== null;
}

/** True when the job's last delivery still sits in the queue (so the reconciler need not add another). */
export async function isQueued(queue: Queue<DeliveryData>, id: string | null): Promise<boolean> {
  if (!id) return false;
  return QUEUED_STATES.has(await queue.getJobState(id));
}

/**
 * Delivers the job whose turn it now is on a thread (after a job of it ended), unless that job's
 * latest delivery still waits in the queue: jobs refused as thread_busy dropped theirs
 * (Ledger.waitForThread), and the reconciler leaves a held thread's jobs alone. Judged after the
 * ending job committed, so a delivery still waiting will find the thread free; one being
 * processed may have been refused, so it gets another (a duplicate is refused harmlessly).
 * Returns the new delivery's id, or null when nothing needed one.
 */
export async function handOffThread(queue: Queue<DeliveryData>, ledger: Ledger, thread: Pick<Job, 'tenant' | 'threadId'>): Promise<string | null> {
  const next = await ledger.nextOfThread(thread);
  if (!next || (await isQueued(queue, next.deliveryId))) return null;
  return deliver(queue, ledger, next);
}

/** `work`'s answer, or `fallback()` when it has not settled within `timeoutMs`. */
export async function settleWithin<T>(work: Promise<T>, timeoutMs: number, fallback: () => T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(fallback()), timeoutMs);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
