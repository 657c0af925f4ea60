import type pg from 'pg';
import { type AdmissionRow, admissionParams, admissionRow, admittedJob } from './admission';
import { Coalescer, type Waiter } from './coalescer';
import { sealContext } from './crypto';
import type { Queryable } from './db';
import { IdempotencyConflictError, LedgerError, ThreadBusyError } from './errors';
import { DIGESTED, json, LedgerCore, type LedgerOptions } from './ledger-core';
import { toJob } from './rows';
import { checkThreadKey, DEFAULT_TENANT } from './threads';
import type { AdmitRequest, AdmitResult, Job } from './types';

type EnqueuedMark = { jobId: string; deliveries: number; deliveryId: string };
/** A delivery the queue took: the job and the delivery's id. */
export type Delivered = { jobId: string; deliveryId: string };

/** Admission statements running at once before further `admit` calls wait to go together (bench/admit.ts). */
const ADMIT_IN_FLIGHT = 2;
/** Most rows in one coalesced admission statement: a whole POST /v1/jobs/batch (up to 500 jobs) fits in one. */
const ADMIT_MAX_BATCH = 512;

/**
 * The ledger's admission verbs: `admit` (concurrent calls coalesced into shared statements),
 * `recordEnqueued` (the queue took an admission's first delivery) and `markEnqueued` (a further
 * delivery was issued and queued).
 */
export class AdmissionLedger extends LedgerCore {
  constructor(pool: pg.Pool, options: LedgerOptions = {}) {
    super(pool, options);
    const co = options.coalesceAdmissions ?? {};
    const inFlight = co === false ? 0 : (co.maxInFlight ?? ADMIT_IN_FLIGHT);
    const maxBatch = co === false ? 0 : (co.maxBatch ?? ADMIT_MAX_BATCH);
    this.admissions = co === false ? undefined : new Coalescer((batch) => this.admitBatch(batch), inFlight, maxBatch);
    this.marks = co === false ? undefined : new Coalescer((batch) => this.markBatch(batch), inFlight, maxBatch);
    this.enqueuedEvents = co === false ? undefined : new Coalescer((batch) => this.enqueuedBatch(batch), inFlight, maxBatch);
  }

  /**
   * The admission row as stored: input and metadata sealed, the idempotency key and the request
   * fingerprint (computed on the plaintext) as keyed digests, the key also sealed for readers.
   * Without a codec the row is stored as it is.
   */
  private stored(row: AdmissionRow): AdmissionRow {
    if (!this.crypto) return row;
    const { jobId, idempotencyKey: key } = row;
    return {
      ...row,
      webhook: row.webhook === null ? null : this.seal(row.webhook, sealContext.jobWebhook(jobId)),
      input: this.seal(row.input, sealContext.jobInput(jobId)),
      metadata: this.seal(row.metadata, sealContext.jobMetadata(jobId)) as Record<string, unknown>,
      idempotencyKey: key === null ? null : this.digest(key, DIGESTED.idempotencyKey),
      idempotencyKeySealed: key === null ? undefined : this.seal(key, sealContext.jobIdempotencyKey(jobId)),
      // Forms of the same key stored before a rotation or before encryption: the unique index
      // cannot see them, so admit_jobs.sql skips the row when one exists.
      olderKeyForms: key === null ? undefined : this.storedForms(key, DIGESTED.idempotencyKey).slice(1),
      hash: row.hash === null ? null : this.digest(row.hash, DIGESTED.requestHash),
    };
  }

  /** Concurrent `admit` calls on the pool, coalesced into one statement each round trip; undefined when off. */
  private readonly admissions: Coalescer<AdmissionRow, AdmitResult> | undefined;

  /**
   * Records an admission. Same tenant + key + request → the same job (`created: false`); another
   * request → IdempotencyConflictError; a thread id starting with `~` or a malformed tenant →
   * LedgerError INVALID_REQUEST (see threads.ts). Concurrent calls without `db` share statements (see
   * `coalesceAdmissions`); each still answers only after its own row committed, with its own error.
   */
  async admit(req: AdmitRequest, db?: Queryable): Promise<AdmitResult> {
    checkThreadKey(req.tenant ?? DEFAULT_TENANT, req.threadId);
    if (req.multitask === 'reject' && !db) return this.inTransaction((client) => this.admit(req, client));
    if (!db && this.admissions) return this.admissions.submit(admissionRow(req));
    return this.admitWith(req, db ?? this.pool);
  }

  private async admitWith(req: AdmitRequest, db: Queryable, row = admissionRow(req)): Promise<AdmitResult> {
    if (req.multitask === 'reject') {
      await this.q('lock_thread', [row.tenant, row.threadId], db);
      const existing = await this.sameRequest(row, db);
      if (existing) return { job: existing, created: false };
      const open = await this.q('find_open_job_of_thread', [row.tenant, row.threadId], db);
      if (open.rows[0]) throw new ThreadBusyError(row.threadId, open.rows[0].job_id);
    }
    return this.insertRow(row, db);
  }

  /** Admits one row with its own statement. Insert first: a fresh key (the common case) costs one round trip. */
  private async insertRow(row: AdmissionRow, db: Queryable): Promise<AdmitResult> {
    const inserted = (await this.q('admit_jobs', admissionParams([this.stored(row)], json), db)).rows[0];
    if (inserted) return { job: admittedJob(row, inserted), created: true };
    return this.takenKey(row, db);
  }

  /** The answer for a row whose tenant + key was taken: the same request is the same job, another request a conflict. */
  private async takenKey(row: AdmissionRow, db: Queryable): Promise<AdmitResult> {
    const existing = await this.sameRequest(row, db);
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
          batch.map((w) => this.stored(w.item)),
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
      if (row) w.resolve({ job: admittedJob(w.item, row), created: true });
      else taken.push(this.takenKey(w.item, this.pool).then(w.resolve, w.reject));
    }
    await Promise.all(taken);
  }

  /**
   * The job admitted under the row's idempotency key for the same request, undefined when there
   * is none (or the row has no key), or IdempotencyConflictError. Keys and fingerprints are
   * compared in every stored form (digests under each configured key, plaintext), so rows
   * admitted before a key rotation, or before encryption was turned on, still match. `request`
   * is the plaintext row (admissionRow).
   */
  private async sameRequest(request: AdmissionRow, db: Queryable): Promise<Job | undefined> {
    const { tenant, idempotencyKey: key, hash } = request;
    if (key === null || hash === null) return undefined;
    const row = (await this.q('find_by_idempotency_key', [tenant, this.storedForms(key, DIGESTED.idempotencyKey)], db)).rows[0];
    if (!row) return undefined;
    if (!this.storedForms(hash, DIGESTED.requestHash).includes(row.request_hash)) throw new IdempotencyConflictError(key, row.job_id);
    return toJob(row, this.crypto);
  }

  /** Concurrent `recordEnqueued` calls, coalesced like admissions; undefined when off. */
  private readonly enqueuedEvents: Coalescer<Delivered, void> | undefined;

  /**
   * Records that the queue took the first delivery of new admissions (the one each admission
   * issued, id = its job id): appends their `enqueued` events and writes nothing else. Concurrent
   * calls share one statement, whatever their size: the group commit's flushes and concurrent
   * batches each hand over a list.
   */
  async recordEnqueued(delivered: readonly Delivered[]): Promise<void> {
    if (delivered.length === 0) return;
    const events = this.enqueuedEvents;
    if (!events) return this.insertEnqueued(delivered);
    await Promise.all(delivered.map((d) => events.submit(d)));
  }

  private async enqueuedBatch(batch: Array<Waiter<Delivered, void>>): Promise<void> {
    await this.insertEnqueued(batch.map((w) => w.item));
    for (const w of batch) w.resolve();
  }

  private async insertEnqueued(delivered: readonly Delivered[]): Promise<void> {
    await this.q('record_enqueued', [delivered.map((d) => d.jobId), delivered.map((d) => d.deliveryId)]);
  }

  /** Concurrent `markEnqueued` calls, coalesced like admissions; undefined when off. */
  private readonly marks: Coalescer<EnqueuedMark, boolean> | undefined;

  /**
   * Records that a further delivery `deliveryId` (number `deliveries + 1`: a redelivery, a
   * resume, a replay) was queued. Returns false when another caller recorded
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
  private async markEnqueuedMany(marks: readonly EnqueuedMark[]): Promise<string[]> {
    if (marks.length === 0) return [];
    const r = await this.q('mark_enqueued', [marks.map((m) => m.jobId), marks.map((m) => m.deliveries), marks.map((m) => m.deliveryId)]);
    return r.rows.map((x) => x.job_id as string);
  }
}
