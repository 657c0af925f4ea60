import { AesGcmPayloadCodec, admitInTransaction, type Queryable } from '@runledger/ledger';
import type { JobStatus, SubmitRequest } from './types';

export interface AdmitOptions {
  /** The ledger's schema (DB_SCHEMA). Default `public`. */
  schema?: string;
  /**
   * The producer's RUNLEDGER_ENCRYPTION_KEY (`kid:base64key[,…]`): when set, the input and the
   * metadata are sealed at rest and the idempotency key and request fingerprint stored as keyed
   * digests, as the producer stores them. Default none: stored as plain jsonb. A malformed value throws
   * before anything is written.
   */
  encryptionKey?: string;
}

export interface InTransactionAdmission {
  jobId: string;
  threadId: string;
  status: JobStatus;
  acceptedAt: Date;
  /** False when the idempotency key named an earlier admission of the same request. */
  created: boolean;
}

/**
 * Admits a job inside the caller's own PostgreSQL transaction (`client` must be in BEGIN), so
 * the job exists if and only if the caller's transaction commits. No queue message is sent:
 * the worker's reconciler delivers the job after the commit, within its sweep interval.
 * Throws when `client` is not in a transaction, and the ledger's errors
 * (IdempotencyConflictError, ThreadBusyError, LedgerError DATABASE_UNAVAILABLE).
 * With `runAt` / `delayMs` the reconciler delivers it once due.
 * The graph's input is not validated here (no registry): a bad input fails the job at run time.
 */
export async function admit(client: Queryable, request: SubmitRequest, options: AdmitOptions = {}): Promise<InTransactionAdmission> {
  const codec = options.encryptionKey ? AesGcmPayloadCodec.fromSpec(options.encryptionKey) : undefined;
  const { runAt, delayMs, ...rest } = request;
  if (runAt !== undefined && delayMs !== undefined) throw new TypeError('Send runAt or delayMs, not both.');
  // Due time by this process's clock; the worker's claim judges it by the database's.
  const due = delayMs !== undefined ? new Date(Date.now() + delayMs) : runAt === undefined ? undefined : new Date(runAt);
  if (due && Number.isNaN(due.getTime())) throw new TypeError(`runAt ${String(runAt)} is not a time.`);
  const { job, created } = await admitInTransaction(client, { ...rest, runAt: due }, options.schema ?? 'public', codec);
  return { jobId: job.jobId, threadId: job.threadId, status: job.status, acceptedAt: job.acceptedAt, created };
}
