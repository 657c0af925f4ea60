import type { JobStatus } from './states';

/** A job as callers see it (camelCase view of a `jobs` row). */
export interface Job {
  jobId: string;
  seq: number;
  tenant: string;
  idempotencyKey: string | null;
  graph: string;
  /** The version of the graph that runs the job (chosen at admission, moved by `upgrade`); null = any. */
  graphVersion: string | null;
  threadId: string;
  input: unknown;
  metadata: Record<string, unknown>;
  status: JobStatus;
  attempt: number;
  maxAttempts: number;
  timeoutMs: number | null;
  fencingToken: number;
  leaseOwner: string | null;
  leaseExpiresAt: Date | null;
  /** Not claimed before this time (a delayed admission, a retry's back-off); null = now. */
  runAfter: Date | null;
  /** 0 (none, served first) or 1–1000, lower first: BullMQ's order. */
  priority: number;
  resumeValue: unknown;
  recoveryReason: string | null;
  result: unknown;
  error: unknown;
  interrupt: unknown;
  deliveries: number;
  deliveryId: string | null;
  acceptedAt: Date;
  enqueuedAt: Date | null;
  startedAt: Date | null;
  firstCheckpointAt: Date | null;
  completedAt: Date | null;
  updatedAt: Date;
  /**
   * While the job is accepted or recovery_required: the job holding its thread (an earlier
   * unfinished job, or one holding a lease), so this one waits; null otherwise. Read by `get`
   * and `list`; other verbs return null.
   */
  blockedBy: string | null;
  /**
   * While the job waits (accepted, recovery_required, interrupted) and has a version: whether a
   * live worker serves its graph and version (false: it waits for one). Null otherwise; read by
   * `get` and `list`.
   */
  versionServed: boolean | null;
}

export interface JobEvent {
  eventId: number;
  jobId: string;
  at: Date;
  type: string;
  attempt: number;
  fencingToken: number;
  workerId: string | null;
  detail: Record<string, unknown>;
}

export type EffectStatus = 'pending' | 'committed' | 'failed';

export interface Effect {
  jobId: string;
  effectKey: string;
  name: string;
  status: EffectStatus;
  idempotencyKey: string;
  attempts: number;
  fencingToken: number;
  result: unknown;
  error: unknown;
  createdAt: Date;
  updatedAt: Date;
}

export interface AdmitRequest {
  tenant?: string;
  graph: string;
  /** The version of the graph that will run the job (the admitting process's). Default none: any worker serving the graph. */
  graphVersion?: string;
  input: unknown;
  threadId?: string;
  idempotencyKey?: string;
  metadata?: Record<string, unknown>;
  /** `enqueue` (default) waits behind the thread's unfinished jobs; `reject` refuses with ThreadBusyError. */
  multitask?: 'enqueue' | 'reject';
  maxAttempts?: number;
  timeoutMs?: number;
  /** Not claimed before this time (database clock); default now. Not part of the request's fingerprint. */
  runAt?: Date;
  /** 0 (default: none, served before any prioritized job) or 1–1000, lower runs first (BullMQ's order). */
  priority?: number;
  /** The admission span's W3C traceparent, stored on a new job so its attempts join the trace. Not part of the fingerprint. */
  traceContext?: string;
  /**
   * URL told (POST of the run) at each end of the run; stored sealed. Checked by the caller
   * (allowed destinations); part of the request's fingerprint when set. Default none.
   */
  webhook?: string;
}

export interface AdmitResult {
  job: Job;
  /** False when an earlier admission with the same key and request was returned. */
  created: boolean;
}

export type ClaimRefusal = 'not_found' | 'terminal' | 'lease_held' | 'thread_busy' | 'not_due' | 'parked' | 'rate_limited' | 'not_served';

export type ClaimResult =
  | {
      ok: true;
      job: Job;
      previousStatus: JobStatus;
      previousReason: string | null;
      /** The claim also recorded the `started` decision (first attempt; only with `startGraphs`). */
      started: boolean;
      /** False when the job certainly has no pending effect (`pendingEffects` can be skipped). */
      mayHavePendingEffects: boolean;
      /** The job's LangGraph thread had no checkpoint at the claim: a fresh thread (SaverOptions.emptyThread). */
      threadEmpty: boolean;
    }
  | { ok: false; reason: ClaimRefusal; status?: JobStatus; blockedBy?: string; dueInMs?: number };

/** What ending an attempt as completed or failed tells the caller. */
export interface AttemptEnd {
  /** Another job of the thread is unfinished: hand the thread on (handOffThread). */
  otherJobsOnThread: boolean;
}

/** The job whose turn it is on a thread (`nextOfThread`), with its latest delivery. */
export interface ThreadTurn extends Pick<Job, 'graph' | 'tenant' | 'threadId' | 'attempt' | 'priority'> {
  jobId: string;
  deliveries: number;
  deliveryId: string | null;
}

export interface ListFilter {
  tenant?: string;
  status?: JobStatus;
  graph?: string;
  threadId?: string;
  cursor?: string;
  limit?: number;
}

export interface SweepResult {
  /** Jobs whose lease had expired, now recovery_required: deliver them at once. */
  expired: string[];
  /** Jobs that should be queued and have no recent delivery: check the queue, then deliver. */
  undelivered: Array<
    { jobId: string; deliveries: number; deliveryId: string | null; status: JobStatus } & Pick<Job, 'graph' | 'tenant' | 'threadId' | 'attempt' | 'priority'>
  >;
}

/** An operator's move of waiting or parked jobs to another version of their graph (Ledger.upgrade). */
export interface UpgradeRequest {
  graph: string;
  from: string;
  to: string;
  /** Start jobs whose checkpoints `to` cannot resume again from their stored input. Default false. */
  replay?: boolean;
  /** Only this job. Default every matching job. */
  jobId?: string;
  tenant?: string;
  /** Recorded in each `upgraded` event (not stored when encryption at rest is on). */
  note?: string;
}

export interface UpgradeResult {
  /** A worker announced `to` as able to resume checkpoints of `from`. */
  compatible: boolean;
  /** A live worker serves `to` now. */
  live: boolean;
  /** Each matching job: moved (replayed or not), or refused with `incompatible`, `effects_in_doubt` or `thread_shared`. */
  jobs: Array<{ jobId: string; status: string; moved: boolean; replayed: boolean; refused: string | null }>;
}
