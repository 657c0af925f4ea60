import { type Admitter, type AdmitterOptions, admitTogether, crashHere, repeated } from './admit-together';
import { sendAdmittedWithin } from './delivery';
import { GroupCommit } from './group-commit';

export type { AdmitOutcome, Admitted, Admitter, AdmitterOptions } from './admit-together';

/**
 * `ledger.admit`, then the job's first delivery to the queue and its `enqueued` event. The
 * ledger coalesces concurrent admit and recordEnqueued calls into shared statements (no timer),
 * so under load requests share commits here too; alone, a request waits for nothing.
 */
function directAdmitter(options: AdmitterOptions): Admitter {
  const { ledger, queue, enqueueTimeoutMs } = options;
  return {
    async admit(request, log) {
      const { job, created } = await ledger.admit(request);
      if (!created) return repeated(options, job);
      crashHere(options, 'after_admit_commit');
      // The admission is durable now; a queue outage only delays delivery (the reconciler catches up).
      return { job, created, enqueued: await sendAdmittedWithin(queue, ledger, [job], enqueueTimeoutMs, log) };
    },
    admitMany: (requests, log) => admitTogether(options, requests, log),
    async close() {},
  };
}

/** The admitter for these options: group commit when `batchWindowMs` > 0, else direct. */
export function createAdmitter(options: AdmitterOptions): Admitter {
  return options.batchWindowMs > 0 ? new GroupCommit(options) : directAdmitter(options);
}
