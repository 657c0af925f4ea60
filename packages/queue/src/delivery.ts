import type { Delivered, Job, Ledger } from '@runledger/ledger';
import type { Queue } from 'bullmq';

/**
 * The message a delivery carries: a reference, never the payload. The other fields only label it
 * for people reading Bull Board (never the input); workers read `jobId` alone.
 */
export interface DeliveryData {
  jobId: string;
  graph?: string;
  threadId?: string;
  tenant?: string;
  /** The ledger's attempt count when delivered; the claiming worker sets the attempt it runs. */
  attempt?: number;
  /** 0 for the admission's own delivery, n for the n-th redelivery. */
  delivery?: number;
}

/** What labels a delivery in Bull Board: the job's graph, thread, tenant and attempt. */
export type DeliveryLabel = Pick<Job, 'graph' | 'threadId' | 'tenant' | 'attempt'>;

/** When and in which order a delivery should run: the job's due time and priority as the ledger holds them. */
export type DeliverySchedule = Partial<Pick<Job, 'runAfter' | 'priority'>>;

/**
 * BullMQ options carrying a job's schedule: a delay until its due time (the ledger judges due by
 * its own clock, so a delivery that arrives early is moved back to delayed by the worker) and its
 * priority (0 = BullMQ's wait list, ahead of every prioritized job).
 */
export function scheduleOptions(job: DeliverySchedule, now = Date.now()): { delay?: number; priority?: number } {
  const delay = job.runAfter ? job.runAfter.getTime() - now : 0;
  return { delay: delay > 0 ? delay : undefined, priority: job.priority ? job.priority : undefined };
}

/** A delivery's BullMQ name: its graph, marked when it is a redelivery. */
export function deliveryName(graph: string | undefined, n: number): string {
  const name = graph ?? 'run';
  return n === 0 ? name : `${name} (redelivery ${n})`;
}

function deliveryData(jobId: string, n: number, label: Partial<DeliveryLabel>): DeliveryData {
  return { jobId, graph: label.graph, threadId: label.threadId, tenant: label.tenant, attempt: label.attempt, delivery: n };
}

/** BullMQ job id of a job's n-th delivery: the job id, then `<jobId>-d<n>` (no `:`, never all digits). */
export function deliveryId(jobId: string, n: number): string {
  return n === 0 ? jobId : `${jobId}-d${n}`;
}

const FINISHED_STATES = new Set(['completed', 'failed']);

/**
 * Adds delivery number `deliveries` of a job (optionally delayed) and records it in the ledger.
 * A duplicate delivery is harmless: its claim is refused. Without the job's label (graph …) the
 * job is read first, so every delivery is named. Returns the delivery id.
 *
 * Finished deliveries are kept for inspection, and BullMQ ignores an `add` whose id exists: a
 * delivery that reached the queue while its ledger record did not (markEnqueued failed) has the
 * id this call would use. Such a finished one is removed first, so the add is never a no-op.
 */
export async function deliver(
  queue: Queue<DeliveryData>,
  ledger: Ledger,
  job: { jobId: string; deliveries: number } & Partial<DeliveryLabel> & DeliverySchedule,
  delayMs = 0,
): Promise<string> {
  const id = deliveryId(job.jobId, job.deliveries);
  const label = job.graph === undefined ? await ledger.get(job.jobId) : job;
  if (FINISHED_STATES.has(await queue.getJobState(id))) await queue.remove(id);
  const data = deliveryData(job.jobId, job.deliveries, label);
  const schedule = scheduleOptions(label);
  const delay = Math.max(delayMs, schedule.delay ?? 0);
  await queue.add(deliveryName(label.graph, job.deliveries), data, { jobId: id, priority: schedule.priority, delay: delay > 0 ? delay : undefined });
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
  jobs: ReadonlyArray<{ jobId: string; deliveryId: string | null } & Partial<DeliveryLabel> & DeliverySchedule>,
): Promise<void> {
  if (jobs.length === 0) return;
  const delivered: Delivered[] = jobs.map((j) => ({ jobId: j.jobId, deliveryId: j.deliveryId ?? j.jobId }));
  const now = Date.now();
  const entries = jobs.map((j, i) => ({
    name: deliveryName(j.graph, 0),
    data: deliveryData(j.jobId, 0, j),
    opts: { jobId: delivered[i]?.deliveryId, ...scheduleOptions(j, now) },
  }));
  if (entries.length === 1) {
    const [e] = entries as [(typeof entries)[0]];
    await queue.add(e.name, e.data, e.opts);
  } else {
    await queue.addBulk(entries);
  }
  await ledger.recordEnqueued(delivered);
}

/** States in which a delivery is still on its way to a worker. */
const QUEUED_STATES = new Set(['waiting', 'delayed', 'prioritized', 'waiting-children']);

/**
 * True when the queue holds delivery `id` unfinished (waiting, delayed, active …). A finished
 * delivery kept for inspection does not count: it will not run the job again.
 */
export async function queueHas(queue: Queue<DeliveryData>, id: string | null): Promise<boolean> {
  if (id === null) return false;
  const state = await queue.getJobState(id);
  return state !== 'unknown' && !FINISHED_STATES.has(state);
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
 * BullMQ's lock on a delivery a worker took (the worker renews it while alive). Once it lapses
 * unrenewed, BullMQ's stall check puts the delivery back in the queue.
 */
export const DELIVERY_LOCK_MS = 30_000;

/**
 * True when delivery `id` still sits in the queue, or a worker took it less than
 * DELIVERY_LOCK_MS ago (it is on its way to the claim). The reconciler's rule: a claim slowed by
 * load is not a lost delivery, and a worker that died holding it is covered by BullMQ's stall
 * check and, at worst, a redelivery after the lock's time.
 */
export async function isQueuedOrTaken(queue: Queue<DeliveryData>, id: string | null, now = Date.now()): Promise<boolean> {
  if (!id) return false;
  const state = await queue.getJobState(id);
  if (QUEUED_STATES.has(state)) return true;
  if (state !== 'active') return false;
  const taken = (await queue.getJob(id))?.processedOn;
  return taken !== undefined && now - taken < DELIVERY_LOCK_MS;
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
