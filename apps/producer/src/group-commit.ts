import { type AdmitRequest, type Job, Ledger } from '@runledger/ledger';
import { deliver } from '@runledger/queue';
import type { FastifyBaseLogger } from 'fastify';
import pg from 'pg';
import type { Admitted, Admitter, AdmitterOptions } from './admitter';

interface Pending {
  request: AdmitRequest;
  log: FastifyBaseLogger;
  resolve: (a: Admitted) => void;
  reject: (err: unknown) => void;
}

type Outcome = { ok: true; job: Job; created: boolean } | { ok: false; error: unknown };

interface Mark {
  jobId: string;
  deliveries: number;
  deliveryId: string;
}

/**
 * A Ledger whose verbs run on `client`, inside its open transaction. The Ledger sends the
 * statements of `markEnqueued` through `pool.query`, so the client can stand in for the pool.
 */
const ledgerOn = (client: pg.PoolClient): Ledger => new Ledger(client as unknown as pg.Pool);

/**
 * Group commit: admissions arriving within `batchWindowMs` share one transaction (one fsync),
 * then their deliveries go to the queue together and are recorded in a second transaction.
 * Every request still gets its own answer: a typed ledger error (idempotency conflict, busy
 * thread) fails only its own request. A statement error aborts the batch; each admission is
 * then retried on its own, so one bad row cannot fail its neighbours.
 */
export class GroupCommit implements Admitter {
  private pending: Pending[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly options: AdmitterOptions) {}

  admit(request: AdmitRequest, log: FastifyBaseLogger): Promise<Admitted> {
    return new Promise<Admitted>((resolve, reject) => {
      this.pending.push({ request, log, resolve, reject });
      if (this.pending.length >= this.options.maxBatch) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), this.options.batchWindowMs);
    });
  }

  async close(): Promise<void> {
    this.flush();
    await Promise.allSettled([...this.inFlight]);
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    const run = this.process(batch).finally(() => this.inFlight.delete(run));
    this.inFlight.add(run);
  }

  private async process(batch: Pending[]): Promise<void> {
    let outcomes: Outcome[];
    try {
      outcomes = await this.admitTogether(batch);
    } catch (err) {
      if (!(err instanceof pg.DatabaseError)) {
        for (const p of batch) p.reject(err);
        return;
      }
      // A statement failed and took the batch's transaction with it: admit one by one instead.
      outcomes = await Promise.all(
        batch.map((p) =>
          this.options.ledger.admit(p.request).then(
            ({ job, created }): Outcome => ({ ok: true, job, created }),
            (error): Outcome => ({ ok: false, error }),
          ),
        ),
      );
    }
    const created = outcomes.flatMap((o, i) => (o.ok && o.created ? [{ job: o.job, log: batch[i]!.log }] : []));
    const enqueued = await this.deliverTogether(created);
    outcomes.forEach((o, i) => {
      const p = batch[i]!;
      if (o.ok) p.resolve({ job: o.job, created: o.created, enqueued: o.created ? enqueued.has(o.job.jobId) : o.job.deliveries > 0 });
      else p.reject(o.error);
    });
  }

  /** All admissions of the batch in one transaction; typed ledger errors stay with their request. */
  private admitTogether(batch: Pending[]): Promise<Outcome[]> {
    return this.options.ledger.inTransaction(async (client) => {
      const outcomes: Outcome[] = [];
      for (const p of batch) {
        try {
          const { job, created } = await this.options.ledger.admit(p.request, client);
          outcomes.push({ ok: true, job, created });
        } catch (error) {
          // A statement error aborts the transaction: let inTransaction roll back.
          if (error instanceof pg.DatabaseError || (error as { code?: string }).code === 'DATABASE_UNAVAILABLE') throw error;
          outcomes.push({ ok: false, error });
        }
      }
      return outcomes;
    });
  }

  /** Adds the new jobs' first deliveries concurrently, then records them in one transaction. Returns the delivered job ids. */
  private async deliverTogether(jobs: Array<{ job: Job; log: FastifyBaseLogger }>): Promise<Set<string>> {
    if (jobs.length === 0) return new Set();
    const marks: Mark[] = [];
    // deliver() adds to the queue, then calls markEnqueued: collect those calls to write them together.
    const recorder = {
      markEnqueued: async (jobId: string, deliveries: number, deliveryId: string) => {
        marks.push({ jobId, deliveries, deliveryId });
        return true;
      },
    } as unknown as Ledger;
    const { queue, enqueueTimeoutMs } = this.options;
    await withTimeout(Promise.allSettled(jobs.map(({ job }) => deliver(queue, recorder, { jobId: job.jobId, deliveries: job.deliveries }))), enqueueTimeoutMs);
    const done = new Set(marks.map((m) => m.jobId));
    // A late add (after the timeout) is not recorded here; the reconciler records it when it redelivers.
    if (done.size < jobs.length) jobs[0]?.log.warn({ missed: jobs.length - done.size }, 'queue add failed or timed out; the reconciler will deliver');
    const recorded = [...marks];
    if (recorded.length > 0) {
      await this.options.ledger
        .inTransaction(async (client) => {
          const tx = ledgerOn(client);
          for (const m of recorded) await tx.markEnqueued(m.jobId, m.deliveries, m.deliveryId);
        })
        .catch((err: Error) => jobs[0]?.log.warn({ err: err.message }, 'recording deliveries failed; the reconciler will redeliver'));
    }
    return done;
  }
}

async function withTimeout(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
