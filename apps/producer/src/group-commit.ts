import type { AdmitRequest } from '@runledger/ledger';
import type { FastifyBaseLogger } from 'fastify';
import { type AdmitOutcome, type Admitted, type Admitter, type AdmitterOptions, admitTogether } from './admit-together';

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

  /** A batch request is already a batch: it goes to the ledger at once, without waiting for the window. */
  admitMany(requests: readonly AdmitRequest[], log: FastifyBaseLogger): Promise<AdmitOutcome[]> {
    return admitTogether(this.options, requests, log);
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
    const outcomes = await admitTogether(
      this.options,
      batch.map((p) => p.request),
      batch[0]!.log,
    );
    outcomes.forEach((o, i) => {
      const p = batch[i]!;
      if ('error' in o) p.reject(o.error);
      else p.resolve(o);
    });
  }
}
