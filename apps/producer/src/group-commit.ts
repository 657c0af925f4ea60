import type { AdmitRequest } from '@runledger/ledger';
import { deliverMany } from '@runledger/queue';
import type { FastifyBaseLogger } from 'fastify';
import type { Admitted, Admitter, AdmitterOptions } from './admitter';

interface Pending {
  request: AdmitRequest;
  log: FastifyBaseLogger;
  resolve: (a: Admitted) => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit: admissions arriving within `batchWindowMs` are written with one multi-row
 * ledger statement (one commit), their first deliveries go to the queue with one `addBulk`, and
 * those are recorded with one more statement. Every request still gets its own answer: a typed
 * ledger error (idempotency conflict, busy thread) fails only its own request.
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
    let results: Awaited<ReturnType<AdmitterOptions['ledger']['admitMany']>>;
    try {
      results = await this.options.ledger.admitMany(batch.map((p) => p.request));
    } catch (err) {
      for (const p of batch) p.reject(err);
      return;
    }
    const created = results.flatMap((r) => ('job' in r && r.created ? [r.job] : []));
    // Test hook (crash window B): die between the commit and the queue add.
    if (created.length > 0 && this.options.crashAt === 'after_admit_commit') process.kill(process.pid, 'SIGKILL');
    const enqueued = await this.deliverTogether(created, batch[0]!.log);
    results.forEach((r, i) => {
      const p = batch[i]!;
      if ('error' in r) p.reject(r.error);
      else p.resolve({ job: r.job, created: r.created, enqueued: r.created ? enqueued.has(r.job.jobId) : r.job.deliveries > 0 });
    });
  }

  /** First deliveries of the new jobs, best effort within the enqueue timeout; returns the job ids delivered. */
  private async deliverTogether(jobs: Array<{ jobId: string; deliveries: number }>, log: FastifyBaseLogger): Promise<Set<string>> {
    if (jobs.length === 0) return new Set();
    const { queue, ledger, enqueueTimeoutMs } = this.options;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<string[]>((resolve) => {
      timer = setTimeout(() => resolve([]), enqueueTimeoutMs);
    });
    const delivered = deliverMany(queue, ledger, jobs).catch((err: Error) => {
      log.warn({ err: err.message, jobs: jobs.length }, 'queue add failed; the reconciler will deliver');
      return [] as string[];
    });
    try {
      const done = await Promise.race([delivered, timeout]);
      if (done.length < jobs.length) log.warn({ missed: jobs.length - done.length }, 'some deliveries not recorded in time; the reconciler will deliver them');
      return new Set(done);
    } finally {
      clearTimeout(timer);
    }
  }
}
