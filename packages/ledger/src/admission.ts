import { v7 as timeOrderedUuid } from 'uuid';
import { requestHash } from './fingerprint';
import type { AdmitRequest, Job } from './types';

/** One row of `admit_jobs.sql`, computed from a request. */
export interface AdmissionRow {
  jobId: string;
  tenant: string;
  idempotencyKey: string | null;
  /** The request fingerprint, computed only when there is an idempotency key (the only reader); null without one. */
  hash: string | null;
  graph: string;
  /** The version of the graph that will run the job (admit_jobs $13); null = any worker serving the graph. */
  graphVersion: string | null;
  threadId: string;
  input: unknown;
  metadata: Record<string, unknown>;
  maxAttempts: number;
  timeoutMs: number | null;
  /** Due time (null = now) and priority (0 = none): schedule the job, not part of its fingerprint. */
  runAfter: Date | null;
  priority: number;
  /** The plaintext key sealed, stored beside its digest when encryption is on (admit_jobs $11). */
  idempotencyKeySealed?: unknown;
  /** Other stored forms of the key (older keys' digests, the plaintext) that also make it taken (admit_jobs $12). */
  olderKeyForms?: string[];
  /** The admission's W3C traceparent (admit_jobs $16); null when tracing is off. */
  traceContext: string | null;
  /** The run's webhook URL (admit_jobs $17), sealed by the ledger before it is stored; null = none. */
  webhook: unknown;
}

/**
 * The row for a request, in plaintext: a new job id (UUIDv7), the thread (default: the job id) and,
 * when the request has an idempotency key, the request fingerprint (unkeyed SHA-256; the ledger
 * keys it and the idempotency key, and seals input and metadata, before they are stored).
 */
export function admissionRow(req: AdmitRequest): AdmissionRow {
  // Time-ordered (UUIDv7: 48 bits of milliseconds, then 74 random bits): a new job's id, and its
  // thread id by default, land at the right edge of their indexes instead of on a random page.
  const jobId = timeOrderedUuid();
  const { graph, input, threadId, metadata, multitask, maxAttempts, timeoutMs, webhook } = req;
  return {
    jobId,
    tenant: req.tenant ?? 'default',
    idempotencyKey: req.idempotencyKey ?? null,
    // The fingerprint covers everything that changes what runs, in plaintext. It answers only a
    // repeated key, so a request without one skips its canonical JSON and SHA-256.
    hash: req.idempotencyKey ? requestHash({ graph, input, threadId, metadata, multitask, maxAttempts, timeoutMs, webhook }) : null,
    graph,
    // Not in the fingerprint: the same request sent again after a deploy is the same job.
    graphVersion: req.graphVersion ?? null,
    threadId: threadId ?? jobId,
    input: input ?? null,
    metadata: metadata ?? {},
    maxAttempts: maxAttempts ?? 3,
    timeoutMs: timeoutMs ?? null,
    runAfter: req.runAt ?? null,
    priority: req.priority ?? 0,
    traceContext: req.traceContext ?? null,
    webhook: webhook ?? null,
  };
}

/** `admit_jobs.sql` parameters: one array per column. `encode` turns a jsonb value into its stored text. */
export function admissionParams(rows: readonly AdmissionRow[], encode: (v: unknown) => string | null): unknown[] {
  return [
    rows.map((r) => r.jobId),
    rows.map((r) => r.tenant),
    rows.map((r) => r.idempotencyKey),
    rows.map((r) => r.hash),
    rows.map((r) => r.graph),
    rows.map((r) => r.threadId),
    rows.map((r) => encode(r.input)),
    rows.map((r) => encode(r.metadata)),
    rows.map((r) => r.maxAttempts),
    rows.map((r) => r.timeoutMs),
    rows.map((r) => encode(r.idempotencyKeySealed)),
    rows.map((r) => encode(r.olderKeyForms)),
    rows.map((r) => r.runAfter),
    rows.map((r) => r.priority),
    rows.map((r) => r.graphVersion),
    rows.map((r) => r.traceContext),
    rows.map((r) => (r.webhook === null ? null : encode(r.webhook))),
  ];
}

/**
 * The job `admit_jobs.sql` just inserted for `row`, from what was written (the plaintext input)
 * and what the statement returned (`seq`, `accepted_at`): no read back, nothing to parse or open.
 */
export function admittedJob(row: AdmissionRow, inserted: Record<string, unknown>): Job {
  const acceptedAt = inserted.accepted_at as Date;
  return {
    jobId: row.jobId,
    seq: Number(inserted.seq),
    tenant: row.tenant,
    idempotencyKey: row.idempotencyKey,
    graph: row.graph,
    graphVersion: row.graphVersion,
    threadId: row.threadId,
    input: row.input,
    metadata: row.metadata,
    status: 'accepted',
    attempt: 0,
    maxAttempts: row.maxAttempts,
    timeoutMs: row.timeoutMs,
    fencingToken: 0,
    leaseOwner: null,
    leaseExpiresAt: null,
    runAfter: row.runAfter,
    priority: row.priority,
    resumeValue: null,
    recoveryReason: null,
    result: null,
    error: null,
    interrupt: null,
    // The admission issues the first delivery (admit_jobs.sql).
    deliveries: 1,
    deliveryId: row.jobId,
    acceptedAt,
    enqueuedAt: acceptedAt,
    startedAt: null,
    firstCheckpointAt: null,
    completedAt: null,
    updatedAt: acceptedAt,
    // Not read here: `get` tells whether an earlier job of the thread holds it.
    blockedBy: null,
    versionServed: null,
  };
}
