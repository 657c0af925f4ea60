// What both admitters share (the direct one in admitter.ts, GroupCommit in group-commit.ts): the
// answer types, the options, and admitting a set of requests together. Below both, so neither
// imports the other back.
import type { AdmitRequest, Job, Ledger } from '@runledger/ledger';
import type { DeliveryData } from '@runledger/queue';
import type { Queue } from 'bullmq';
import type { FastifyBaseLogger } from 'fastify';
import { deliveredBefore, sendAdmittedWithin } from './delivery';

export interface Admitted {
  job: Job;
  /** False when the idempotency key named an earlier admission of the same request. */
  created: boolean;
  /** Whether a delivery of the job reached the queue. */
  enqueued: boolean;
}

/** One request's answer in a batch: its admission, or the error that refused it (nothing written for it). */
export type AdmitOutcome = Admitted | { error: unknown };

/** How POST /v1/jobs turns a valid request into a durable admission and a delivery. */
export interface Admitter {
  /** Commits the admission (throws the ledger's errors), then delivers a new job best effort. */
  admit(request: AdmitRequest, log: FastifyBaseLogger): Promise<Admitted>;
  /**
   * Admits many requests together at once (POST /v1/jobs/batch): one coalesced ledger statement
   * and one `addBulk` for the new jobs. Each answer is its own admission or its own error, in order.
   */
  admitMany(requests: readonly AdmitRequest[], log: FastifyBaseLogger): Promise<AdmitOutcome[]>;
  /** Finishes what is in flight. */
  close(): Promise<void>;
}

export interface AdmitterOptions {
  ledger: Ledger;
  queue: Queue<DeliveryData>;
  enqueueTimeoutMs: number;
  /** Group commit window; 0 = each request admits on its own (the ledger still coalesces concurrent calls). */
  batchWindowMs: number;
  /** Most admissions per group commit. */
  maxBatch: number;
  /** Test hook: `after_admit_commit` kills the process once an admission committed, before its queue add (crash window B). */
  crashAt?: 'after_admit_commit';
}

/** SIGKILLs this process when the test hook names `point`: no answer, no queue add, no cleanup. */
export function crashHere(options: Pick<AdmitterOptions, 'crashAt'>, point: 'after_admit_commit'): void {
  if (options.crashAt === point) process.kill(process.pid, 'SIGKILL');
}

/** The answer to a repeated admission (same key, same request): its job, and whether that job got past the queue or is in it. */
export async function repeated(options: AdmitterOptions, job: Job): Promise<Admitted> {
  return { job, created: false, enqueued: await deliveredBefore(options.queue, options.ledger, job, options.enqueueTimeoutMs) };
}

/**
 * Admits `requests` together: issued in one synchronous burst, the ledger coalesces them into
 * shared statements (one per round trip, up to its batch size); the new jobs' first deliveries
 * go to the queue with one `addBulk` and one more statement appends their `enqueued` events. A
 * refused request (typed ledger error) fails only its own answer. The group commit's path.
 */
export async function admitTogether(options: AdmitterOptions, requests: readonly AdmitRequest[], log: FastifyBaseLogger): Promise<AdmitOutcome[]> {
  const results = await Promise.all(requests.map((r) => options.ledger.admit(r).catch((error: unknown) => ({ error }))));
  const created = results.flatMap((r) => ('job' in r && r.created ? [r.job] : []));
  if (created.length > 0) crashHere(options, 'after_admit_commit');
  const { queue, ledger, enqueueTimeoutMs } = options;
  // The admissions are durable now; a queue outage only delays delivery (the reconciler catches up).
  const enqueued = created.length > 0 && (await sendAdmittedWithin(queue, ledger, created, enqueueTimeoutMs, log));
  return Promise.all(
    results.map(async (r): Promise<AdmitOutcome> => {
      if ('error' in r) return r;
      return r.created ? { job: r.job, created: true, enqueued } : repeated(options, r.job);
    }),
  );
}
