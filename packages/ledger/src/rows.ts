import { type PayloadCodec, sealContext } from './crypto';
import type { Effect, Job, JobEvent } from './types';

type Row = Record<string, unknown>;

const num = (v: unknown): number => Number(v);

/** The plaintext of a payload column: opened with `codec` when one is given, else as stored. */
const open = (codec: PayloadCodec | undefined, stored: unknown, context: string): unknown => (codec ? codec.open(stored, context) : stored);

/** Maps a `jobs` row; `codec` opens the sealed input, result, interrupt and resume value. */
export function toJob(r: Row, codec?: PayloadCodec): Job {
  return {
    jobId: r.job_id as string,
    seq: num(r.seq),
    tenant: r.tenant as string,
    idempotencyKey: (r.idempotency_key as string | null) ?? null,
    graph: r.graph as string,
    threadId: r.thread_id as string,
    input: open(codec, r.input, sealContext.jobInput(r.job_id as string)),
    metadata: (r.metadata as Record<string, unknown>) ?? {},
    status: r.status as Job['status'],
    attempt: num(r.attempt),
    maxAttempts: num(r.max_attempts),
    timeoutMs: r.timeout_ms == null ? null : num(r.timeout_ms),
    fencingToken: num(r.fencing_token),
    leaseOwner: (r.lease_owner as string | null) ?? null,
    leaseExpiresAt: (r.lease_expires_at as Date | null) ?? null,
    runAfter: (r.run_after as Date | null) ?? null,
    resumeValue: open(codec, r.resume_value ?? null, sealContext.jobResumeValue(r.job_id as string)),
    recoveryReason: (r.recovery_reason as string | null) ?? null,
    result: open(codec, r.result ?? null, sealContext.jobResult(r.job_id as string)),
    error: r.error ?? null,
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
  };
}

/** Maps a `job_events` row; `codec` opens the sealed payloads of its detail (an interrupt, a resume value). */
export function toEvent(r: Row, codec?: PayloadCodec): JobEvent {
  const stored = (r.detail as Record<string, unknown>) ?? {};
  const jobId = r.job_id as string;
  const detail = codec ? Object.fromEntries(Object.entries(stored).map(([k, v]) => [k, open(codec, v, sealContext.eventDetail(jobId, k))])) : stored;
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

/** Maps an `effects` row; `codec` opens the sealed result. */
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
    error: r.error ?? null,
    createdAt: r.created_at as Date,
    updatedAt: r.updated_at as Date,
  };
}
