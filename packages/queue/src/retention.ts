/**
 * How long finished deliveries stay in the queue for inspection (Bull Board's Completed and
 * Failed tabs). Both an age and a count bound them, so a busy day cannot grow Redis without
 * limit. Removal is BullMQ's own, done when a delivery finishes; the ledger never needs them.
 */
export interface DeliveryRetention {
  /** Completed deliveries are kept this many hours. Default 24. */
  completedHours: number;
  /** At most this many completed deliveries are kept (the newest). Default 10,000. */
  completedCount: number;
  /** Failed deliveries are kept this many days, at most `completedCount` of them. Default 7. */
  failedDays: number;
}

export const DEFAULT_RETENTION: DeliveryRetention = { completedHours: 24, completedCount: 10_000, failedDays: 7 };

/** Log lines kept per delivery: a run's timeline, bounded should a graph loop for long. */
export const KEPT_LOG_LINES = 200;

/** BullMQ job options for every delivery: one attempt (the ledger retries), bounded retention. */
export function deliveryJobOptions(r: DeliveryRetention = DEFAULT_RETENTION) {
  return {
    attempts: 1,
    keepLogs: KEPT_LOG_LINES,
    removeOnComplete: { age: Math.round(r.completedHours * 3600), count: r.completedCount },
    removeOnFail: { age: Math.round(r.failedDays * 86_400), count: r.completedCount },
  };
}
