import type { DeliveryData } from '@runledger/queue';
import type { Queue } from 'bullmq';
import type { Admitter } from './admitter';
import { ApiError } from './http-errors';

/** MAX_BACKLOG's default: deliveries waiting for a worker before admissions answer 503 backlog_full. */
export const DEFAULT_MAX_BACKLOG = 100_000;

/** How often the queue's backlog is counted again (a count per admission would cost a round trip each). */
const COUNT_EVERY_MS = 1_000;

/**
 * An admitter that refuses new work with 503 `backlog_full` while the queue holds `maxBacklog`
 * or more deliveries that no worker has taken (waiting, prioritized, delayed): past that, a new
 * job would only wait longer, and the ledger and Redis would keep growing. The count is read in
 * the background, at most once a second while admissions arrive; when the queue cannot be counted
 * (Redis down) admissions pass, since the ledger keeps them and the reconciler delivers later.
 * `maxBacklog` 0 turns the check off.
 */
export function limitBacklog(admitter: Admitter, queue: Queue<DeliveryData>, maxBacklog: number, countTimeoutMs: number): Admitter {
  if (maxBacklog <= 0) return admitter;
  let backlog = 0;
  let countedAt = 0;
  let counting: Promise<void> | undefined;
  const count = () => {
    countedAt = Date.now();
    const timeout = new Promise<number>((resolve) => setTimeout(() => resolve(0), countTimeoutMs).unref());
    counting ??= Promise.race([queue.getJobCountByTypes('waiting', 'prioritized', 'delayed'), timeout])
      .then(
        (n) => {
          backlog = n;
        },
        () => {
          backlog = 0;
        },
      )
      .finally(() => {
        counting = undefined;
      });
    return counting;
  };
  const check = async () => {
    // Never awaited: an admission costs no round trip for this, and a slow queue does not slow it.
    if (Date.now() - countedAt >= COUNT_EVERY_MS) void count();
    if (backlog >= maxBacklog) {
      throw new ApiError(
        503,
        'backlog_full',
        `The queue holds ${backlog} jobs no worker has taken yet (MAX_BACKLOG ${maxBacklog}); nothing was admitted. Retry later, or add workers.`,
      );
    }
  };
  return {
    async admit(request, log) {
      await check();
      return admitter.admit(request, log);
    },
    async admitMany(requests, log) {
      await check();
      return admitter.admitMany(requests, log);
    },
    close: () => admitter.close(),
  };
}
