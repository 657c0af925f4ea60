import type pg from 'pg';
import { type AdmissionRow, admissionParams, admissionRow, Coalescer, type Waiter } from './admission';
import { type PayloadCodec, sealContext } from './crypto';
import { type Queryable, wrapDbError } from './db';
import { IdempotencyConflictError, InvalidTransitionError, LeaseLostError, LedgerError, NotFoundError, ThreadBusyError } from './errors';
import { toEffect, toEvent, toJob } from './rows';
import { sql } from './sql';
import { type JobStatus, TERMINAL_STATUSES } from './states';
import type { AdmitRequest, AdmitResult, ClaimResult, Effect, Job, JobEvent, ListFilter, SweepResult } from './types';

export interface LedgerOptions {
  /** Lease length judged by the database clock. Default 6000 ms. */
  leaseTtlMs?: number;
  /**
   * Encryption at rest of job input, job result and effect results (AesGcmPayloadCodec from
   * RUNLEDGER_ENCRYPTION_KEY): sealed on write, opened on read. Default none: stored as plain jsonb.
   */
  crypto?: PayloadCodec;
  /**
   * Natural group commit of `admit` calls made without a caller transaction and without
   * `multitask: "reject"`: while `maxInFlight` admission statements are running, further calls
   * wait and go together as the next statement (no timer). Default on; `false` commits each
   * call alone. `markEnqueued` calls are coalesced the same way.
   */
  coalesceAdmissions?: false | { maxInFlight?: number; maxBatch?: number };
}

type EnqueuedMark = { jobId: string; deliveries: number; deliveryId: string };

/** Admission statements running at once before further `admit` calls wait to go together (bench/admit.ts). */
const ADMIT_IN_FLIGHT = 2;
/** Most rows in one coalesced admission statement. */
const ADMIT_MAX_BATCH = 256;

/** The fields of `end_attempt.sql` a verb sets; the rest stay null. */
interface EndAttempt {
  status: JobStatus;
  event: string;
  detail?: Record<string, unknown>;
  result?: unknown;
  error?: unknown;
  interrupt?: unknown;
  reason?: string;
  runAfterMs?: number;
}

/** Statements prepared once per connection (all on the hot path, none with optional filters). */
const PREPARED = new Set([
  'admit_jobs',
  'mark_enqueued',
  'claim_lease',
  'heartbeat',
  'append_event',
  'record_checkpoint',
  'end_attempt',
  'get_job',
  'find_effect',
  'record_effect_intent',
  'settle_effect',
  'list_pending_effects',
]);

const json = (v: unknown) => (v === undefined ? null : JSON.stringify(v));

/**
 * The acceptance ledger: every durable fact about a job, as verbs. Worker writes take the
 * fencing token and throw `LeaseLostError` when it is stale; nothing is written then.
 */
export class Ledger {
  readonly leaseTtlMs: number;
  private readonly crypto: PayloadCodec | undefined;

  constructor(
    readonly pool: pg.Pool,
    options: LedgerOptions = {},
  ) {
    this.leaseTtlMs = options.leaseTtlMs ?? 6_000;
    this.crypto = options.crypto;
    const co = options.coalesceAdmissions ?? {};
    const inFlight = co === false ? 0 : (co.maxInFlight ?? ADMIT_IN_FLIGHT);
    const maxBatch = co === false ? 0 : (co.maxBatch ?? ADMIT_MAX_BATCH);
    this.admissions = co === false ? undefined : new Coalescer((batch) => this.admitBatch(batch), inFlight, maxBatch);
    this.marks = co === false ? undefined : new Coalescer((batch) => this.markBatch(batch), inFlight, maxBatch);
  }

  /** The stored form of a payload column: sealed when a codec is set; undefined stays undefined (SQL NULL, "unchanged"). */
  private seal(value: unknown, context: string): unknown {
    return value === undefined || !this.crypto ? value : this.crypto.seal(value, context);
  }

  /** The admission row with its input sealed; its fingerprint was computed on the plaintext. */
  private sealInput(row: AdmissionRow): AdmissionRow {
    return { ...row, input: this.seal(row.input, sealContext.jobInput(row.jobId)) };
  }

  private async q(name: string, values: unknown[], db: Queryable = this.pool): Promise<pg.QueryResult> {
    try {
      // Hot-path writes run as named statements: parsing and planning them was over half of
      // their server CPU (bench/admit-cost.ts). Reads with optional filters stay unnamed.
      return await (db as pg.Pool).query({ name: PREPARED.has(name) ? `runledger_${name}` : undefined, text: sql(name), values });
    } catch (err) {
      throw wrapDbError(err);
    }
  }

  /** Concurrent `admit` calls on the pool, coalesced into one statement each round trip; undefined when off. */
  private readonly admissions: Coalescer<AdmissionRow, AdmitResult> | undefined;

  /**
   * Records an admission. Same tenant + key + request → the same job (`created: false`); another
   * request → IdempotencyConflictError. Concurrent calls without `db` share statements (see
   * `coalesceAdmissions`); each still answers only after its own row committed, with its own error.
   */
  async admit(req: AdmitRequest, db?: Queryable): Promise<AdmitResult> {
    if (req.multitask === 'reject' && !db) return this.inTransaction((client) => this.admit(req, client));
    if (!db && this.admissions) return this.admissions.submit(admissionRow(req));
    return this.admitWith(req, db ?? this.pool);
  }

  /** Runs `fn` in one transaction on one pooled client. */
  async inTransaction<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect().catch((err) => {
      throw wrapDbError(err);
    });
    try {
      await client.query('BEGIN');
      const out = await fn(client);
      await client.query('COMMIT');
      return out;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  }

  private async admitWith(req: AdmitRequest, db: Queryable, row = admissionRow(req)): Promise<AdmitResult> {
    if (req.multitask === 'reject') {
      await this.q('lock_thread', [row.threadId], db);
      if (row.idempotencyKey) {
        const existing = await this.sameRequest(row.tenant, row.idempotencyKey, row.hash, db);
        if (existing) return { job: existing, created: false };
      }
      const open = await this.q('find_open_job_of_thread', [row.threadId], db);
      if (open.rows[0]) throw new ThreadBusyError(row.threadId, open.rows[0].job_id);
    }
    return this.insertRow(row, db);
  }

  /** Admits one row with its own statement. Insert first: a fresh key (the common case) costs one round trip. */
  private async insertRow(row: AdmissionRow, db: Queryable): Promise<AdmitResult> {
    const inserted = (await this.q('admit_jobs', admissionParams([this.sealInput(row)], json), db)).rows[0];
    if (inserted) return { job: toJob(inserted, this.crypto), created: true };
    return this.takenKey(row, db);
  }

  /** The answer for a row whose tenant + key was taken: the same request is the same job, another request a conflict. */
  private async takenKey(row: AdmissionRow, db: Queryable): Promise<AdmitResult> {
    const existing = await this.sameRequest(row.tenant, row.idempotencyKey as string, row.hash, db);
    if (!existing) throw new Error(`Idempotency key ${row.idempotencyKey} conflicted but no job holds it; retry the admission.`);
    return { job: existing, created: false };
  }

  /**
   * One coalesced admission statement (autocommit) for a batch of `admit` calls. Rows whose key
   * was taken (by an earlier admission or an earlier row of this batch) are answered from the
   * row that holds it. A row PostgreSQL refuses fails the whole statement, so then each row is
   * admitted alone, in arrival order, and only the refused one fails.
   */
  private async admitBatch(batch: Array<Waiter<AdmissionRow, AdmitResult>>): Promise<void> {
    const admitAlone = (row: AdmissionRow) => this.insertRow(row, this.pool);
    if (batch.length === 1) {
      const [w] = batch as [Waiter<AdmissionRow, AdmitResult>];
      return admitAlone(w.item).then(w.resolve, w.reject);
    }
    let inserted: Map<string, Record<string, unknown>>;
    try {
      const r = await this.q(
        'admit_jobs',
        admissionParams(
          batch.map((w) => this.sealInput(w.item)),
          json,
        ),
      );
      inserted = new Map(r.rows.map((x) => [x.job_id as string, x]));
    } catch (err) {
      if (err instanceof LedgerError) throw err;
      for (const w of batch) await admitAlone(w.item).then(w.resolve, w.reject);
      return;
    }
    const taken: Array<Promise<void>> = [];
    for (const w of batch) {
      const row = inserted.get(w.item.jobId);
      if (row) {
        try {
          w.resolve({ job: toJob(row, this.crypto), created: true });
        } catch (err) {
          w.reject(err);
        }
      } else taken.push(this.takenKey(w.item, this.pool).then(w.resolve, w.reject));
    }
    await Promise.all(taken);
  }

  /**
   * Group commit: admits many requests with one statement. Requests whose key is taken and
   * `multitask: "reject"` requests fall back to `admit` one by one. Results keep the order of
   * `requests`; a request's own error (conflict, busy thread) is returned, not thrown.
   */
  async admitMany(requests: readonly AdmitRequest[]): Promise<Array<AdmitResult | { error: unknown }>> {
    const rows = requests.map(admissionRow);
    const batch = rows.filter((_, i) => requests[i]?.multitask !== 'reject');
    const inserted = new Map<string, Job>();
    try {
      const params = admissionParams(
        batch.map((b) => this.sealInput(b)),
        json,
      );
      if (batch.length > 0) for (const r of (await this.q('admit_jobs', params)).rows) inserted.set(r.job_id, toJob(r, this.crypto));
    } catch (err) {
      // A row PostgreSQL refuses fails the whole statement: admit one by one so it fails alone.
      if (err instanceof LedgerError) throw err;
    }
    // The rest one by one, in arrival order, so a busy thread or a taken key goes to the first comer.
    const results: Array<AdmitResult | { error: unknown }> = [];
    for (const [i, req] of requests.entries()) {
      const job = inserted.get((rows[i] as AdmissionRow).jobId);
      results.push(job ? { job, created: true } : await this.admit(req).catch((error: unknown) => ({ error })));
    }
    return results;
  }

  private async sameRequest(tenant: string, key: string, hash: string, db: Queryable): Promise<Job | undefined> {
    const row = (await this.q('find_by_idempotency_key', [tenant, key], db)).rows[0];
    if (!row) return undefined;
    if (row.request_hash !== hash) throw new IdempotencyConflictError(key, row.job_id);
    return toJob(row, this.crypto);
  }

  /** Concurrent `markEnqueued` calls, coalesced like admissions; undefined when off. */
  private readonly marks: Coalescer<EnqueuedMark, boolean> | undefined;

  /**
   * Records that delivery `deliveryId` was queued. Returns false when another caller recorded
   * delivery number `deliveries + 1` first. Concurrent calls share one statement.
   */
  async markEnqueued(jobId: string, deliveries: number, deliveryId: string): Promise<boolean> {
    if (this.marks) return this.marks.submit({ jobId, deliveries, deliveryId });
    return (await this.markEnqueuedMany([{ jobId, deliveries, deliveryId }])).length === 1;
  }

  /**
   * One mark_enqueued statement for a batch of `markEnqueued` calls. A job may appear once per
   * statement (its compare-and-set answers one caller), so later marks of the same job follow
   * one by one; after a failed statement each mark is tried alone.
   */
  private async markBatch(batch: Array<Waiter<EnqueuedMark, boolean>>): Promise<void> {
    const seen = new Set<string>();
    const first: Array<Waiter<EnqueuedMark, boolean>> = [];
    const again: Array<Waiter<EnqueuedMark, boolean>> = [];
    for (const w of batch) {
      (seen.has(w.item.jobId) ? again : first).push(w);
      seen.add(w.item.jobId);
    }
    let recorded: Set<string> | undefined;
    try {
      recorded = new Set(await this.markEnqueuedMany(first.map((w) => w.item)));
    } catch (err) {
      if (err instanceof LedgerError || first.length === 1) throw err;
    }
    for (const w of first) {
      if (recorded) w.resolve(recorded.has(w.item.jobId));
      else again.push(w);
    }
    for (const w of again) await this.markEnqueuedMany([w.item]).then((r) => w.resolve(r.length === 1), w.reject);
  }

  /** markEnqueued for many jobs in one statement; returns the job ids this caller recorded. */
  async markEnqueuedMany(marks: ReadonlyArray<{ jobId: string; deliveries: number; deliveryId: string }>, db: Queryable = this.pool): Promise<string[]> {
    if (marks.length === 0) return [];
    const r = await this.q('mark_enqueued', [marks.map((m) => m.jobId), marks.map((m) => m.deliveries), marks.map((m) => m.deliveryId)], db);
    return r.rows.map((x) => x.job_id as string);
  }

  /**
   * Takes the lease with a new fencing token, or explains why not. With `startGraphs` (the graphs
   * the caller runs), a job's first claim also records the `started` decision in the same
   * statement (`started: true`); `mayHavePendingEffects: false` means `pendingEffects` would
   * return nothing.
   */
  async claim(jobId: string, workerId: string, ttlMs = this.leaseTtlMs, options: { startGraphs?: readonly string[] } = {}): Promise<ClaimResult> {
    try {
      const row = (await this.q('claim_lease', [jobId, workerId, ttlMs, options.startGraphs ?? null])).rows[0];
      if (row)
        return {
          ok: true,
          job: toJob(row, this.crypto),
          previousStatus: row.previous_status,
          previousReason: row.previous_reason,
          started: row.claim_started === true,
          mayHavePendingEffects: row.claim_may_have_pending_effects !== false,
        };
    } catch (err) {
      // Two jobs of one thread claimed at once: the partial unique index lets one win.
      if ((err as { code?: string }).code === '23505') return { ok: false, reason: 'thread_busy' };
      throw err;
    }
    const why = (await this.q('explain_refusal', [jobId])).rows[0];
    if (!why) return { ok: false, reason: 'not_found' };
    const status = why.status as JobStatus;
    if (TERMINAL_STATUSES.includes(status)) return { ok: false, reason: 'terminal', status };
    if (status === 'interrupted' || status === 'manual_reconcile') return { ok: false, reason: 'parked', status };
    if (why.blocked_by) return { ok: false, reason: 'thread_busy', status, blockedBy: why.blocked_by };
    if (status === 'recovery_required' && why.run_after) return { ok: false, reason: 'not_due', status, dueInMs: Number(why.due_in_ms) };
    return { ok: false, reason: 'lease_held', status };
  }

  /** Renews all of a worker's leases in one statement; returns the job ids whose lease is lost. */
  async heartbeat(workerId: string, leases: ReadonlyArray<{ jobId: string; token: number }>, ttlMs = this.leaseTtlMs): Promise<string[]> {
    const r = await this.q('heartbeat', [workerId, leases.map((l) => l.jobId), leases.map((l) => l.token), ttlMs]);
    return r.rows.map((x) => x.job_id as string);
  }

  /** Appends a decision to the timeline (resumed, replayed, error …) for the lease holder. */
  async appendEvent(jobId: string, token: number, type: string, detail: Record<string, unknown> = {}): Promise<void> {
    const r = await this.q('append_event', [jobId, token, type, json(detail)]);
    if (r.rowCount !== 1) throw new LeaseLostError(jobId, token, `event ${type}`);
  }

  /** starting → running on the first checkpoint, as FencedPostgresSaver's put_checkpoint.sql does in its own statement. */
  async recordCheckpoint(jobId: string, token: number, db: Queryable = this.pool): Promise<boolean> {
    return (await this.q('record_checkpoint', [jobId, token], db)).rowCount === 1;
  }

  private async end(jobId: string, token: number, e: EndAttempt): Promise<void> {
    const values = [
      jobId,
      token,
      e.status,
      e.event,
      json(e.detail ?? {}),
      json(this.seal(e.result, sealContext.jobResult(jobId))),
      json(e.error),
      json(e.interrupt),
      e.reason ?? null,
      e.runAfterMs ?? null,
    ];
    const r = await this.q('end_attempt', values);
    if (r.rowCount !== 1) throw new LeaseLostError(jobId, token, e.event);
  }

  complete(jobId: string, token: number, result: unknown, detail: Record<string, unknown> = {}): Promise<void> {
    return this.end(jobId, token, { status: 'completed', event: 'completed', result: result ?? null, detail });
  }

  /** Terminal failure (attempts exhausted, unknown graph, poison job). */
  fail(jobId: string, token: number, error: Record<string, unknown>): Promise<void> {
    return this.end(jobId, token, { status: 'failed', event: 'failed', error, detail: error });
  }

  /** The graph stopped at `interrupt()`: wait for a resume request. */
  park(jobId: string, token: number, interrupt: unknown): Promise<void> {
    return this.end(jobId, token, { status: 'interrupted', event: 'interrupted', interrupt, detail: { interrupt } });
  }

  /** Drain hand-over: give the job back at once so another worker resumes it; not counted as an attempt. */
  release(jobId: string, token: number, reason = 'drained'): Promise<void> {
    return this.end(jobId, token, { status: 'recovery_required', event: 'recovery_required', reason, detail: { reason } });
  }

  /** A failed attempt that will be retried after `delayMs` (by resuming from its checkpoint). */
  retryLater(jobId: string, token: number, error: Record<string, unknown>, delayMs: number): Promise<void> {
    return this.end(jobId, token, {
      status: 'recovery_required',
      event: 'recovery_required',
      error,
      reason: 'retry',
      runAfterMs: delayMs,
      detail: { reason: 'retry', delayMs, error },
    });
  }

  /** Stop for a person: replay is unsafe (an effect's outcome is unknown). */
  requireManual(jobId: string, token: number, reason: string, detail: Record<string, unknown> = {}): Promise<void> {
    return this.end(jobId, token, { status: 'manual_reconcile', event: 'manual_reconcile', reason, detail: { reason, ...detail } });
  }

  private async operate(
    jobId: string,
    tenant: string | undefined,
    from: JobStatus[],
    to: JobStatus,
    event: string,
    action: string,
    extra: { detail?: unknown; resume?: unknown; result?: unknown; error?: unknown; reason?: string } = {},
    db: Queryable = this.pool,
  ): Promise<Job> {
    const values = [
      jobId,
      tenant ?? null,
      from,
      to,
      event,
      json(extra.detail ?? {}),
      json(extra.resume),
      json(this.seal(extra.result, sealContext.jobResult(jobId))),
      json(extra.error),
      extra.reason ?? null,
    ];
    const row = (await this.q('operator_transition', values, db)).rows[0];
    if (row) return toJob(row, this.crypto);
    const current = await this.get(jobId, tenant);
    throw new InvalidTransitionError(jobId, current.status, action);
  }

  /** Cancels a job that has not finished; a running attempt loses its lease and stops. */
  cancel(jobId: string, tenant?: string, note?: string): Promise<Job> {
    const from: JobStatus[] = ['accepted', 'starting', 'running', 'interrupted', 'recovery_required', 'manual_reconcile'];
    return this.operate(jobId, tenant, from, 'cancelled', 'cancelled', 'cancel', { detail: { note }, reason: 'cancelled' });
  }

  /** interrupted → accepted, carrying the value for `Command({ resume })`. */
  resume(jobId: string, value: unknown, tenant?: string): Promise<Job> {
    return this.operate(jobId, tenant, ['interrupted'], 'accepted', 'resume_requested', 'resume', { resume: { value }, detail: { value } });
  }

  /** manual_reconcile → accepted after a person checked; effects in doubt are marked failed so they are called again with the same key. */
  async replay(jobId: string, tenant?: string, note?: string): Promise<Job> {
    // One transaction: a worker that claims the replayed job at once must not have its new
    // intent marked failed by a second, later commit (it would be called again after a crash).
    return this.inTransaction(async (client) => {
      const job = await this.operate(
        jobId,
        tenant,
        ['manual_reconcile'],
        'accepted',
        'replay_requested',
        'replay',
        { detail: { note }, reason: 'operator_replay' },
        client,
      );
      await this.q('abandon_pending_effects', [jobId, note ?? null], client);
      return job;
    });
  }

  /** manual_reconcile → completed or failed, recorded by a person. */
  resolve(jobId: string, outcome: 'completed' | 'failed', note?: string, tenant?: string, result?: unknown): Promise<Job> {
    const extra =
      outcome === 'completed'
        ? { result: result ?? { resolvedBy: 'operator', note } }
        : { error: { code: 'resolved_failed', message: note ?? 'Resolved as failed by an operator' } };
    return this.operate(jobId, tenant, ['manual_reconcile'], outcome, 'resolved', 'resolve', { ...extra, detail: { outcome, note } });
  }

  /** Expired leases → recovery_required; lists jobs with no recent delivery. Safe with many callers. */
  async sweep(options: { graceMs?: number; limit?: number } = {}): Promise<SweepResult> {
    const limit = options.limit ?? 500;
    const expired = (await this.q('expire_leases', [limit])).rows.map((r) => r.job_id as string);
    const undelivered = (await this.q('list_undelivered', [options.graceMs ?? 5_000, limit])).rows.map((r) => ({
      jobId: r.job_id as string,
      deliveries: Number(r.deliveries),
      deliveryId: (r.delivery_id as string | null) ?? null,
      status: r.status as JobStatus,
    }));
    return { expired, undelivered };
  }

  /** Reads one job; NotFoundError when it does not exist or belongs to another tenant. */
  async get(jobId: string, tenant?: string): Promise<Job> {
    const row = (await this.q('get_job', [jobId, tenant ?? null])).rows[0];
    if (!row) throw new NotFoundError(jobId);
    return toJob(row, this.crypto);
  }

  /** Newest first; pass `nextCursor` back as `cursor` for the next page. */
  async list(filter: ListFilter = {}): Promise<{ jobs: Job[]; nextCursor: string | null }> {
    const limit = Math.min(Math.max(filter.limit ?? 50, 1), 500);
    const values = [filter.tenant ?? null, filter.status ?? null, filter.graph ?? null, filter.threadId ?? null, filter.cursor ?? null, limit];
    const jobs = (await this.q('list_jobs', values)).rows.map((r) => toJob(r, this.crypto));
    const last = jobs[jobs.length - 1];
    return { jobs, nextCursor: jobs.length === limit && last ? String(last.seq) : null };
  }

  async events(jobId: string): Promise<JobEvent[]> {
    return (await this.q('list_events', [jobId])).rows.map(toEvent);
  }

  async effects(jobId: string): Promise<Effect[]> {
    return (await this.q('list_effects', [jobId])).rows.map((r) => toEffect(r, this.crypto));
  }

  async countByStatus(tenant?: string): Promise<Record<string, number>> {
    const rows = (await this.q('count_jobs_by_status', [tenant ?? null])).rows;
    return Object.fromEntries(rows.map((r) => [r.status, Number(r.count)]));
  }

  /** Effects whose outcome is unknown (intent recorded, no answer). */
  async pendingEffects(jobId: string): Promise<Array<{ effectKey: string; name: string }>> {
    return (await this.q('list_pending_effects', [jobId])).rows.map((r) => ({ effectKey: r.effect_key, name: r.name }));
  }

  async findEffect(jobId: string, effectKey: string): Promise<Effect | undefined> {
    const row = (await this.q('find_effect', [jobId, effectKey])).rows[0];
    return row ? toEffect(row, this.crypto) : undefined;
  }

  /** Fenced intent row (pending) right before the provider call; counts an attempt when repeated. */
  async recordEffectIntent(jobId: string, token: number, effectKey: string, name: string, idempotencyKey: string): Promise<Effect> {
    const row = (await this.q('record_effect_intent', [jobId, token, effectKey, name, idempotencyKey])).rows[0];
    if (!row) throw new LeaseLostError(jobId, token, `effect intent ${effectKey}`);
    return toEffect(row, this.crypto);
  }

  /** Fenced answer from the provider: committed with its result, or failed with its error. */
  async settleEffect(jobId: string, token: number, effectKey: string, outcome: { result: unknown } | { error: unknown }): Promise<Effect> {
    const values =
      'result' in outcome
        ? [jobId, token, effectKey, 'committed', json(this.seal(outcome.result ?? null, sealContext.effectResult(jobId, effectKey))), null]
        : [jobId, token, effectKey, 'failed', null, json(outcome.error)];
    const row = (await this.q('settle_effect', values)).rows[0];
    if (!row) throw new LeaseLostError(jobId, token, `effect ${effectKey}`);
    return toEffect(row, this.crypto);
  }
}
