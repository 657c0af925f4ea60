import type { AdmitRequest } from '@runledger/ledger';
import type { FastifyBaseLogger } from 'fastify';
import { type Admitted, type Admitter, type AdmitterOptions, crashHere, repeated } from './admitter';
import { sendAdmittedWithin } from './delivery';

interface Pending {
  request: AdmitRequest;
  log: FastifyBaseLogger;
  resolve: (a: Admitted) => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit: admissions arriving within `batchWindowMs` go to the ledger together, which
 * writes them with one multi-row statement (one commit, which also issues each job's first
 * delivery); those deliveries go to the queue with one `addBulk`, and one more statement appends
 * their `enqueued` events. Every request still gets its own answer: a typed ledger error
 * (idempotency conflict, busy thread) fails only its own request.
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
    // Issued together, the admissions share one ledger statement (the ledger coalesces them).
    const results = await Promise.all(batch.map((p) => this.options.ledger.admit(p.request).catch((error: unknown) => ({ error }))));
    const created = results.flatMap((r) => ('job' in r && r.created ? [r.job] : []));
    if (created.length > 0) crashHere(this.options, 'after_admit_commit');
    const { queue, ledger, enqueueTimeoutMs } = this.options;
    const enqueued = created.length > 0 && (await sendAdmittedWithin(queue, ledger, created, enqueueTimeoutMs, batch[0]!.log));
    await Promise.all(
      results.map(async (r, i) => {
        const p = batch[i]!;
        if ('error' in r) p.reject(r.error);
        else p.resolve(r.created ? { job: r.job, created: true, enqueued } : await repeated(this.options, r.job));
      }),
    );
  }
}
