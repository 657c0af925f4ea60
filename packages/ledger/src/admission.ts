import { randomUUID } from 'node:crypto';
import { requestHash } from './fingerprint';
import type { AdmitRequest } from './types';

/** One row of `admit_jobs.sql`, computed from a request. */
export interface AdmissionRow {
  jobId: string;
  tenant: string;
  idempotencyKey: string | null;
  hash: string;
  graph: string;
  threadId: string;
  input: unknown;
  metadata: Record<string, unknown>;
  maxAttempts: number;
  timeoutMs: number | null;
}

/** The row for a request: a new job id, the thread (default: the job id) and the request fingerprint. */
export function admissionRow(req: AdmitRequest): AdmissionRow {
  const jobId = randomUUID();
  const { graph, input, threadId, metadata, multitask, maxAttempts, timeoutMs } = req;
  return {
    jobId,
    tenant: req.tenant ?? 'default',
    idempotencyKey: req.idempotencyKey ?? null,
    // The fingerprint covers everything that changes what runs, in plaintext.
    hash: requestHash({ graph, input, threadId, metadata, multitask, maxAttempts, timeoutMs }),
    graph,
    threadId: threadId ?? jobId,
    input: input ?? null,
    metadata: metadata ?? {},
    maxAttempts: maxAttempts ?? 3,
    timeoutMs: timeoutMs ?? null,
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
  ];
}

/** One caller waiting in a `Coalescer`: its item and how to answer it. */
export interface Waiter<T, R> {
  item: T;
  resolve(value: R): void;
  reject(err: unknown): void;
}

/**
 * Natural group commit, no timer: an item submitted while fewer than `maxInFlight` batches are
 * running goes out at once (after the current microtask, so a synchronous burst travels
 * together); otherwise it waits, and everything that waited goes as the next batch when one
 * returns. Low load therefore adds no latency; under load each statement carries the arrivals of
 * one round trip. `run` answers every waiter of its batch; if it throws, those it left unanswered
 * get that error.
 */
export class Coalescer<T, R> {
  private queue: Array<Waiter<T, R>> = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly run: (batch: Array<Waiter<T, R>>) => Promise<void>,
    private readonly maxInFlight: number,
    private readonly maxBatch: number,
  ) {}

  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.scheduled && this.inFlight < this.maxInFlight) {
        this.scheduled = true;
        queueMicrotask(() => {
          this.scheduled = false;
          this.pump();
        });
      }
    });
  }

  private pump(): void {
    while (this.inFlight < this.maxInFlight && this.queue.length > 0) {
      const batch = this.queue.length <= this.maxBatch ? this.queue : this.queue.slice(0, this.maxBatch);
      this.queue = this.queue.length <= this.maxBatch ? [] : this.queue.slice(this.maxBatch);
      this.inFlight++;
      this.run(batch)
        // Rejecting a settled promise changes nothing, so every waiter of the batch may be told.
        .catch((err: unknown) => {
          for (const w of batch) w.reject(err);
        })
        .finally(() => {
          this.inFlight--;
          this.pump();
        });
    }
  }
}
