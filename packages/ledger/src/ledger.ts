import type pg from 'pg';
import { sealContext } from './crypto';
import type { Queryable } from './db';
import { fenced, InvalidTransitionError, LedgerError, NotFoundError, ThreadBusyError } from './errors';
import { GraphLimits } from './graph-limits';
import { AdmissionLedger } from './ledger-admission';
import { json, type LedgerOptions } from './ledger-core';
import { toEffect, toEvent, toJob } from './rows';
import { type JobStatus, TERMINAL_STATUSES } from './states';
import type { AttemptEnd, ClaimResult, Effect, Job, JobEvent, ListFilter, ThreadTurn, UpgradeRequest, UpgradeResult } from './types';
import { FleetUpkeep } from './upkeep';

export type { GraphLimit, GraphLimitSpec } from './graph-limits';
export type { LedgerOptions } from './ledger-core';

/** PostgreSQL's lock_not_available (lock_timeout passed). */
const LOCK_NOT_AVAILABLE = '55P03';
/** Longest wait for a graph's limit row; the new lease loses at most this much of its TTL. */
const LIMIT_LOCK_WAIT = '1s';
/** Rolls a limited claim back (claimLimited). */
class HeldBack extends Error {
  constructor(readonly dueInMs: number) {
    super('held back by the graph limit');
  }
}

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

/**
 * The acceptance ledger: every durable fact about a job, as verbs. Worker writes take the
 * fencing token and throw `LeaseLostError` when it is stale; nothing is written then.
 * Admission verbs: ledger-admission.ts; the pool and codec: ledger-core.ts; the statement runner: sql.ts; the fence check: errors.ts `fenced`.
 */
export class Ledger extends AdmissionLedger {
  /** Fleet upkeep every worker's reconciler runs: lease expiry, undelivered jobs, counters, the chart's rollup, priority aging. */
  readonly upkeep: FleetUpkeep;
  /** Per-graph limits that claimLimited enforces: set, list, remove. */
  readonly limits: GraphLimits;

  constructor(pool: pg.Pool, options: LedgerOptions = {}) {
    super(pool, options);
    this.upkeep = new FleetUpkeep(pool, options);
    this.limits = new GraphLimits(pool, options);
  }

  /**
   * Takes the lease with a new fencing token, or explains why not. With `startGraphs` (the graphs
   * the caller runs), a job's first claim also records the `started` decision in the same
   * statement (`started: true`); `mayHavePendingEffects: false` means `pendingEffects` would
   * return nothing. With `serves` (graphVersionKey of each graph and version the caller runs), a
   * job of another graph or version is refused as `not_served` and nothing changes.
   */
  async claim(
    jobId: string,
    workerId: string,
    ttlMs = this.leaseTtlMs,
    options: { startGraphs?: readonly string[]; serves?: readonly string[] } = {},
    db?: Queryable,
  ): Promise<ClaimResult> {
    const serves = options.serves ?? null;
    try {
      const row = (await this.q('claim_lease', [jobId, workerId, ttlMs, options.startGraphs ?? null, serves], db)).rows[0];
      if (row)
        return {
          ok: true,
          job: toJob(row, this.crypto),
          previousStatus: row.previous_status,
          previousReason: row.previous_reason,
          started: row.claim_started === true,
          mayHavePendingEffects: row.claim_may_have_pending_effects !== false,
          threadEmpty: row.claim_thread_empty === true,
        };
    } catch (err) {
      // Two jobs of one thread claimed at once: the partial unique index lets one win.
      if ((err as { code?: string }).code === '23505') return { ok: false, reason: 'thread_busy' };
      throw err;
    }
    const why = (await this.q('explain_refusal', [jobId, serves], db)).rows[0];
    if (!why) return { ok: false, reason: 'not_found' };
    const status = why.status as JobStatus;
    if (TERMINAL_STATUSES.includes(status)) return { ok: false, reason: 'terminal', status };
    if (status === 'interrupted' || status === 'manual_reconcile') return { ok: false, reason: 'parked', status };
    if (why.served === false) return { ok: false, reason: 'not_served', status };
    if (why.blocked_by) return { ok: false, reason: 'thread_busy', status, blockedBy: why.blocked_by };
    if ((status === 'recovery_required' || status === 'accepted') && why.run_after && Number(why.due_in_ms) > 0)
      return { ok: false, reason: 'not_due', status, dueInMs: Number(why.due_in_ms) };
    return { ok: false, reason: 'lease_held', status };
  }

  /**
   * `claim` for a job whose graph may have a rate limit (graph_limits): the graph's limit row is
   * locked, the claim made, and kept only when the graph stays within its limits (runs per
   * interval, leased runs across the fleet); otherwise it is rolled back and the answer is
   * `rate_limited` with `dueInMs`, when to try again (spread over the graph's waiting jobs, so
   * they do not all wake at once), and the job's timeline says so once per attempt (`rate_limited`
   * event, also when the claim gave up waiting for the limit row behind other claims: `contention`).
   * A job that no longer waits by then (another delivery claimed it) is refused as `claim` would.
   * Without a limit row this is `claim` in a transaction.
   */
  async claimLimited(
    jobId: string,
    workerId: string,
    ttlMs = this.leaseTtlMs,
    options: { startGraphs?: readonly string[]; serves?: readonly string[] } = {},
  ): Promise<ClaimResult> {
    let heldFor: string | undefined;
    const claim = await this.inTransaction(async (client) => {
      await this.q('set_local_lock_timeout', [LIMIT_LOCK_WAIT], client);
      const limit = (await this.q('lock_graph_limit', [jobId], client)).rows[0];
      const claimed = await this.claim(jobId, workerId, ttlMs, options, client);
      if (!limit || !claimed.ok) return claimed;
      const check = (await this.q('check_graph_limit', [limit.graph, jobId], client)).rows[0];
      if (check?.reason) {
        const interval = Number(check.interval_ms ?? 1_000);
        const base = check.reason === 'rate' ? Number(check.rate_retry_ms) : 250;
        // Spread the waiting jobs' retries over the time the backlog needs, so each slot wakes a few, not all.
        const spread = (interval * Math.max(1, Number(check.waiting))) / Math.max(1, Number(check.max_per_interval ?? check.max_concurrent ?? 1));
        heldFor = check.reason as string;
        throw new HeldBack(Math.ceil(base + Math.random() * Math.min(spread, 60_000)));
      }
      await this.q('record_graph_claim', [limit.graph], client);
      return claimed;
    }).catch((err) => {
      if (err instanceof HeldBack) return { ok: false as const, reason: 'rate_limited' as const, status: 'accepted' as const, dueInMs: err.dueInMs };
      // Claims of the graph queued on its limit row for longer than LIMIT_LOCK_WAIT: held back as
      // well (a busy limit is what makes them queue), tried again later, spread.
      if ((err as { code?: string }).code === LOCK_NOT_AVAILABLE) {
        heldFor = 'contention';
        return { ok: false as const, reason: 'rate_limited' as const, dueInMs: 250 + Math.ceil(Math.random() * 2_000) };
      }
      throw err;
    });
    // After the rollback, outside the limit row's lock; once per episode (record_rate_limited.sql),
    // even when two deliveries of the job are refused at once (the lock).
    const reason = heldFor;
    if (!reason) return claim;
    const status = await this.inTransaction(async (client) => {
      await this.q('lock_rate_limited_event', [jobId], client);
      return (await this.q('record_rate_limited', [jobId, reason], client)).rows[0]?.status as JobStatus | undefined;
    });
    // Another delivery of the job claimed it meanwhile (or it ended): answer as the claim would.
    if (status === undefined) return { ok: false, reason: 'not_found' };
    if (TERMINAL_STATUSES.includes(status)) return { ok: false, reason: 'terminal', status };
    if (status === 'interrupted' || status === 'manual_reconcile') return { ok: false, reason: 'parked', status };
    if (status !== 'accepted' && status !== 'recovery_required') return { ok: false, reason: 'lease_held', status };
    return claim;
  }

  /**
   * After a `thread_busy` refusal: the job holding the thread, with a `waiting_for_thread` event
   * the first time this job waits for it; drop the delivery then (the holder's end hands the
   * thread on). Null when nothing holds the thread any more (claim again) or the job left
   * accepted / recovery_required meanwhile (a claim explains why).
   */
  async waitForThread(jobId: string): Promise<string | null> {
    return ((await this.q('wait_for_thread', [jobId])).rows[0]?.blocked_by as string | null | undefined) ?? null;
  }

  /**
   * After a `not_served` refusal: records `waiting_for_version` the first time the job waits for
   * its version, and tells whether a live worker serves it (then deliver it again for that one;
   * otherwise drop the delivery: the reconciler delivers it once one is live). Null when the job
   * left accepted / recovery_required meanwhile.
   */
  async waitForVersion(jobId: string): Promise<{ graph: string; version: string | null; served: boolean } | null> {
    const row = (await this.q('wait_for_version', [jobId])).rows[0];
    return row ? { graph: row.graph, version: row.graph_version ?? null, served: row.served === true } : null;
  }

  /**
   * Moves waiting or parked jobs of `graph` from version `from` to `to` (see upgrade_jobs.sql): a
   * job with checkpoints moves only when a worker announced `to` as able to resume `from`, or with
   * `replay` (from its stored input; refused while an effect is in doubt). Throws LedgerError
   * INVALID_REQUEST when `to` is `from`, or when no worker ever announced `to` for the graph
   * (start those workers first).
   */
  async upgrade(req: UpgradeRequest): Promise<UpgradeResult> {
    const { graph, from, to } = req;
    if (from === to) throw new LedgerError('INVALID_REQUEST', `Jobs of ${graph}@${from} are on ${to} already: give the version to move them to.`);
    const known = (await this.q('find_version_announcement', [graph, to, from])).rows[0];
    if (!known?.announced) {
      throw new LedgerError('INVALID_REQUEST', `No worker has announced ${graph}@${to}; start workers serving it before moving jobs to it.`);
    }
    const compatible = known.compatible === true;
    // One statement moves many jobs, and notes are sealed per job: with encryption on, the note is not stored.
    const note = this.crypto ? null : (req.note ?? null);
    const rows = (await this.q('upgrade_jobs', [graph, from, to, compatible, req.replay === true, req.tenant ?? null, req.jobId ?? null, json(note)])).rows;
    return {
      compatible,
      live: known.live === true,
      jobs: rows.map((r) => ({ jobId: r.job_id, status: r.status, moved: r.moved, replayed: r.replayed, refused: r.refused ?? null })),
    };
  }

  /** The job whose turn it is on a thread, if it waits for a delivery (accepted, or due for recovery). */
  async nextOfThread(thread: Pick<Job, 'tenant' | 'threadId'>): Promise<ThreadTurn | undefined> {
    const row = (await this.q('next_job_of_thread', [thread.tenant, thread.threadId])).rows[0];
    if (!row) return undefined;
    const label = { graph: row.graph as string, tenant: thread.tenant, threadId: row.thread_id as string, attempt: Number(row.attempt) };
    return { jobId: row.job_id, deliveries: Number(row.deliveries), deliveryId: row.delivery_id ?? null, priority: Number(row.priority), ...label };
  }

  /** Jobs ready to run but for their thread, which another job holds. */
  async countWaitingForThread(tenant?: string): Promise<number> {
    return Number((await this.q('count_jobs_waiting_for_thread', [tenant ?? null])).rows[0]?.count ?? 0);
  }

  /** Jobs ready to run but for a live worker serving their graph and version, by graph and version. */
  async countWaitingForVersion(): Promise<Array<{ graph: string; version: string | null; count: number }>> {
    const rows = (await this.q('count_jobs_waiting_for_version', [])).rows;
    return rows.map((r) => ({ graph: r.graph, version: r.graph_version ?? null, count: Number(r.count) }));
  }

  /** Renews all of a worker's leases in one statement; returns the job ids whose lease is lost. */
  async heartbeat(workerId: string, leases: ReadonlyArray<{ jobId: string; token: number }>, ttlMs = this.leaseTtlMs): Promise<string[]> {
    const r = await this.q('heartbeat', [workerId, leases.map((l) => l.jobId), leases.map((l) => l.token), ttlMs]);
    return r.rows.map((x) => x.job_id as string);
  }

  /** Appends a decision to the timeline (resumed, replayed, error …) for the lease holder. */
  async appendEvent(jobId: string, token: number, type: string, detail: Record<string, unknown> = {}): Promise<void> {
    const r = await this.q('append_event', [jobId, token, type, json(detail)]);
    fenced(r.rowCount === 1, jobId, token, `event ${type}`);
  }

  /** starting → running on the first checkpoint, as FencedPostgresSaver's put_checkpoint.sql does in its own statement. */
  async recordCheckpoint(jobId: string, token: number, db: Queryable = this.pool): Promise<boolean> {
    return (await this.q('record_checkpoint', [jobId, token], db)).rowCount === 1;
  }

  private async end(jobId: string, token: number, e: EndAttempt): Promise<AttemptEnd> {
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
    const row = fenced((await this.q('end_attempt', values)).rows[0], jobId, token, e.event);
    return { otherJobsOnThread: row.other_jobs_on_thread === true };
  }

  /** The job is done; `otherJobsOnThread` says whether to hand its thread on (handOffThread). */
  complete(jobId: string, token: number, result: unknown, detail: Record<string, unknown> = {}): Promise<AttemptEnd> {
    return this.end(jobId, token, { status: 'completed', event: 'completed', result: result ?? null, detail });
  }

  /** Terminal failure (attempts exhausted, unknown graph, poison job); hand the thread on as after `complete`. */
  fail(jobId: string, token: number, error: Record<string, unknown>): Promise<AttemptEnd> {
    return this.end(jobId, token, {
      status: 'failed',
      event: 'failed',
      error: this.sealMessage(error, sealContext.jobError(jobId, 'message')),
      detail: this.sealMessage(error, sealContext.eventDetail(jobId, 'message')),
    });
  }

  /** `error` with its message sealed under `context` (a graph's error message may quote user data); unchanged without a key. */
  private sealMessage(error: Record<string, unknown>, context: string): Record<string, unknown> {
    return error.message === undefined ? error : { ...error, message: this.seal(error.message, context) };
  }

  /** The graph stopped at `interrupt()`: wait for a resume request. */
  async park(jobId: string, token: number, interrupt: unknown): Promise<void> {
    await this.end(jobId, token, {
      status: 'interrupted',
      event: 'interrupted',
      interrupt: this.seal(interrupt, sealContext.jobInterrupt(jobId)),
      detail: { interrupt: this.seal(interrupt, sealContext.eventDetail(jobId, 'interrupt')) },
    });
  }

  /** Drain hand-over: give the job back at once so another worker resumes it; not counted as an attempt. */
  async release(jobId: string, token: number, reason = 'drained'): Promise<void> {
    await this.end(jobId, token, { status: 'recovery_required', event: 'recovery_required', reason, detail: { reason } });
  }

  /** A failed attempt that will be retried after `delayMs` (by resuming from its checkpoint). */
  async retryLater(jobId: string, token: number, error: Record<string, unknown>, delayMs: number): Promise<void> {
    await this.end(jobId, token, {
      status: 'recovery_required',
      event: 'recovery_required',
      error: this.sealMessage(error, sealContext.jobError(jobId, 'message')),
      reason: 'retry',
      runAfterMs: delayMs,
      detail: { reason: 'retry', delayMs, error: this.seal(error, sealContext.eventDetail(jobId, 'error')) },
    });
  }

  /** Stop for a person: replay is unsafe (an effect's outcome is unknown). */
  async requireManual(jobId: string, token: number, reason: string, detail: Record<string, unknown> = {}): Promise<void> {
    await this.end(jobId, token, { status: 'manual_reconcile', event: 'manual_reconcile', reason, detail: { reason, ...detail } });
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

  /** A person's note as stored in an event's detail: sealed when encryption is on (it may carry anything). */
  private eventNote(jobId: string, note: string | undefined): unknown {
    return this.seal(note, sealContext.eventDetail(jobId, 'note'));
  }

  /** Cancels a job that has not finished; a running attempt loses its lease and stops. */
  cancel(jobId: string, tenant?: string, note?: string): Promise<Job> {
    const from: JobStatus[] = ['accepted', 'starting', 'running', 'interrupted', 'recovery_required', 'manual_reconcile'];
    return this.operate(jobId, tenant, from, 'cancelled', 'cancelled', 'cancel', { detail: { note: this.eventNote(jobId, note) }, reason: 'cancelled' });
  }

  /**
   * Rolls a job back (the LangGraph API's rollback): cancels it as `cancel` does (reason
   * `rolled_back`) and, in the same transaction, deletes the checkpoints it wrote, their writes,
   * the blobs only they use and its stream log (delete_run_checkpoints.sql), so its thread is as
   * before the job. Its row, events and effects stay: an effect that reached a provider is never
   * forgotten. Throws InvalidTransitionError for a finished job, writing nothing.
   */
  rollback(jobId: string, tenant?: string, note?: string): Promise<Job> {
    const from: JobStatus[] = ['accepted', 'starting', 'running', 'interrupted', 'recovery_required', 'manual_reconcile'];
    return this.inTransaction(async (client) => {
      const detail = { note: this.eventNote(jobId, note), rollback: true };
      const job = await this.operate(jobId, tenant, from, 'cancelled', 'cancelled', 'rollback', { detail, reason: 'rolled_back' }, client);
      await this.q('delete_run_checkpoints', [jobId], client);
      return job;
    });
  }

  /**
   * Deletes a finished run for the LangGraph API (its DELETE, as LangGraph's server deletes a run
   * and its checkpoints): in one transaction holding the job's thread as a state write does
   * (lock_thread.sql, hold_thread_jobs.sql), marks the job deleted (mark_run_deleted.sql) and
   * deletes its checkpoints, their writes, the blobs only they use and its stream log
   * (delete_run_checkpoints.sql). Its row, with its status, events and effects, stays: the
   * receipt. Throws ThreadBusyError while a run of its thread is unfinished (its checkpoints may
   * build on these), InvalidTransitionError for an unfinished job, writing nothing.
   */
  deleteFinished(jobId: string, tenant?: string, note?: string): Promise<Job> {
    return this.inTransaction(async (client) => {
      const found = (await this.q('get_job', [jobId, tenant ?? null], client)).rows[0];
      if (!found) throw new NotFoundError(jobId);
      const job = toJob(found, this.crypto);
      await this.q('lock_thread', [job.tenant, job.threadId], client);
      const open = (await this.q('hold_thread_jobs', [job.tenant, job.threadId], client)).rows as Array<{ job_id: string }>;
      if (open[0]) throw new ThreadBusyError(job.threadId, open[0].job_id);
      const row = (await this.q('mark_run_deleted', [jobId, tenant ?? null, json({ note: this.eventNote(jobId, note) })], client)).rows[0];
      if (!row) throw new InvalidTransitionError(jobId, job.status, 'delete');
      await this.q('delete_run_checkpoints', [jobId], client);
      return toJob(row, this.crypto);
    });
  }

  /**
   * interrupted → accepted, carrying the value for `Command({ resume })`, and with `command` the
   * Command's other fields (`update`, `goto`, as the LangGraph API sends them) in the same record.
   */
  resume(jobId: string, value: unknown, tenant?: string, command: { update?: unknown; goto?: unknown } = {}): Promise<Job> {
    return this.operate(jobId, tenant, ['interrupted'], 'accepted', 'resume_requested', 'resume', {
      resume: this.seal({ value, ...command }, sealContext.jobResumeValue(jobId)),
      detail: { value: this.seal(value, sealContext.eventDetail(jobId, 'value')) },
    });
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
        { detail: { note: this.eventNote(jobId, note) }, reason: 'operator_replay' },
        client,
      );
      await this.q('abandon_pending_effects', [jobId, json(this.seal(note, sealContext.effectError(jobId, 'note')) ?? null)], client);
      return job;
    });
  }

  /** manual_reconcile → completed or failed, recorded by a person. */
  resolve(jobId: string, outcome: 'completed' | 'failed', note?: string, tenant?: string, result?: unknown): Promise<Job> {
    // The note is sealed wherever it lands (result, error message, event) when encryption is on.
    const message = note === undefined ? 'Resolved as failed by an operator' : this.seal(note, sealContext.jobError(jobId, 'message'));
    const extra = outcome === 'completed' ? { result: result ?? { resolvedBy: 'operator', note } } : { error: { code: 'resolved_failed', message } };
    return this.operate(jobId, tenant, ['manual_reconcile'], outcome, 'resolved', 'resolve', {
      ...extra,
      detail: { outcome, note: this.eventNote(jobId, note) },
    });
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
    return (await this.q('list_events', [jobId])).rows.map((r) => toEvent(r, this.crypto));
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
    const row = fenced(
      (await this.q('record_effect_intent', [jobId, token, effectKey, name, idempotencyKey])).rows[0],
      jobId,
      token,
      `effect intent ${effectKey}`,
    );
    return toEffect(row, this.crypto);
  }

  /** Fenced answer from the provider: committed with its result, or failed with its error. */
  async settleEffect(jobId: string, token: number, effectKey: string, outcome: { result: unknown } | { error: unknown }): Promise<Effect> {
    const values =
      'result' in outcome
        ? [jobId, token, effectKey, 'committed', json(this.seal(outcome.result ?? null, sealContext.effectResult(jobId, effectKey))), null]
        : [jobId, token, effectKey, 'failed', null, json(outcome.error)];
    const row = fenced((await this.q('settle_effect', values)).rows[0], jobId, token, `effect ${effectKey}`);
    return toEffect(row, this.crypto);
  }
}
