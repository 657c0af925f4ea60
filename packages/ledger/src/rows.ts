import { type PayloadCodec, sealContext } from './crypto';
import type { Effect, Job, JobEvent } from './types';

type Row = Record<string, unknown>;

const num = (v: unknown): number => Number(v);

/** The plaintext of a payload column: opened with `codec` when one is given, else as stored. */
const open = (codec: PayloadCodec | undefined, stored: unknown, context: string): unknown => (codec ? codec.open(stored, context) : stored);

/**
 * The fields of a stored object (an event's detail, an error) with each sealed field opened under
 * `context(field)`; anything else as stored. Only some fields are sealed (a note), so each is
 * opened on its own.
 */
function openFields(codec: PayloadCodec | undefined, stored: unknown, context: (field: string) => string): unknown {
  if (!codec || stored === null || typeof stored !== 'object' || Array.isArray(stored)) return stored;
  return Object.fromEntries(Object.entries(stored).map(([k, v]) => [k, codec.open(v, context(k))]));
}

/**
 * Maps a `jobs` row; `codec` opens the sealed input, result, interrupt, resume value, metadata,
 * idempotency key (its sealed copy: the key column holds a digest then) and error notes.
 */
export function toJob(r: Row, codec?: PayloadCodec): Job {
  const jobId = r.job_id as string;
  const sealedKey = r.idempotency_key_sealed ?? null;
  return {
    jobId,
    seq: num(r.seq),
    tenant: r.tenant as string,
    idempotencyKey:
      codec && sealedKey !== null ? (codec.open(sealedKey, sealContext.jobIdempotencyKey(jobId)) as string) : ((r.idempotency_key as string | null) ?? null),
    graph: r.graph as string,
    graphVersion: (r.graph_version as string | null) ?? null,
    threadId: r.thread_id as string,
    input: open(codec, r.input, sealContext.jobInput(r.job_id as string)),
    metadata: (open(codec, r.metadata ?? {}, sealContext.jobMetadata(jobId)) as Record<string, unknown>) ?? {},
    status: r.status as Job['status'],
    attempt: num(r.attempt),
    maxAttempts: num(r.max_attempts),
    timeoutMs: r.timeout_ms == null ? null : num(r.timeout_ms),
    fencingToken: num(r.fencing_token),
    leaseOwner: (r.lease_owner as string | null) ?? null,
    leaseExpiresAt: (r.lease_expires_at as Date | null) ?? null,
    runAfter: (r.run_after as Date | null) ?? null,
    priority: Number(r.priority ?? 0),
    resumeValue: open(codec, r.resume_value ?? null, sealContext.jobResumeValue(r.job_id as string)),
    recoveryReason: (r.recovery_reason as string | null) ?? null,
    result: open(codec, r.result ?? null, sealContext.jobResult(r.job_id as string)),
    error: openFields(codec, r.error ?? null, (field) => sealContext.jobError(jobId, field)),
    interrupt: open(codec, r.interrupt ?? null, sealContext.jobInterrupt(r.job_id as string)),
    deliveries: num(r.deliveries),
    deliveryId: (r.delivery_id as string | null) ?? null,
    acceptedAt: r.accepted_at as Date,
    enqueuedAt: (r.enqueued_at as Date | null) ?? null,
    startedAt: (r.started_at as Date | null) ?? null,
    firstCheckpointAt: (r.first_checkpoint_at as Date | null) ?? null,
    completedAt: (r.completed_at as Date | null) ?? null,
    updatedAt: r.updated_at as Date,
    blockedBy: (r.blocked_by as string | null | undefined) ?? null,
    versionServed: (r.version_served as boolean | null | undefined) ?? null,
  };
}

/** Maps a `job_events` row; `codec` opens the sealed payloads of its detail (an interrupt, a resume value, a note). */
export function toEvent(r: Row, codec?: PayloadCodec): JobEvent {
  const jobId = r.job_id as string;
  const detail = openFields(codec, r.detail ?? {}, (field) => sealContext.eventDetail(jobId, field)) as Record<string, unknown>;
  return {
    eventId: num(r.event_id),
    jobId: r.job_id as string,
    at: r.at as Date,
    type: r.type as string,
    attempt: num(r.attempt),
    fencingToken: num(r.fencing_token),
    workerId: (r.worker_id as string | null) ?? null,
    detail,
  };
}

/** Maps an `effects` row; `codec` opens the sealed result and error notes. */
export function toEffect(r: Row, codec?: PayloadCodec): Effect {
  return {
    jobId: r.job_id as string,
    effectKey: r.effect_key as string,
    name: r.name as string,
    status: r.status as Effect['status'],
    idempotencyKey: r.idempotency_key as string,
    attempts: num(r.attempts),
    fencingToken: num(r.fencing_token),
    result: open(codec, r.result ?? null, sealContext.effectResult(r.job_id as string, r.effect_key as string)),
    error: openFields(codec, r.error ?? null, (field) => sealContext.effectError(r.job_id as string, field)),
    createdAt: r.created_at as Date,
    updatedAt: r.updated_at as Date,
  };
}
