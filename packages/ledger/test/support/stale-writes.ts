// Every fenced worker verb of the ledger, called as a worker that no longer holds its lease
// would call it: the fencing tests call each one and expect LeaseLostError and no change.
import type { Ledger } from '../../src/index';

export type StaleWrite = (ledger: Ledger, jobId: string, token: number) => Promise<unknown>;

/** Each verb expects a pending effect `book-old` recorded under the job's first token. */
export const STALE_WRITES: Record<string, StaleWrite> = {
  complete: (l, id, t) => l.complete(id, t, { stale: true }),
  fail: (l, id, t) => l.fail(id, t, { message: 'stale' }),
  park: (l, id, t) => l.park(id, t, { ask: 'stale' }),
  release: (l, id, t) => l.release(id, t),
  retryLater: (l, id, t) => l.retryLater(id, t, { message: 'stale' }, 10),
  requireManual: (l, id, t) => l.requireManual(id, t, 'stale'),
  appendEvent: (l, id, t) => l.appendEvent(id, t, 'resumed'),
  recordEffectIntent: (l, id, t) => l.recordEffectIntent(id, t, 'book-new', 'book', 'idem-new'),
  // The stale worker settles the effect whose intent it recorded before it lost the lease.
  settleEffect: (l, id, t) => l.settleEffect(id, t, 'book-old', { result: { stale: true } }),
};
