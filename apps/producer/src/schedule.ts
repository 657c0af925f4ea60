import { ApiError } from './http-errors';

/** Lowest and highest priority a job may ask for: 0 (none, served first), then 1 before 1000 (BullMQ's order). */
export const PRIORITY_RANGE = { min: 0, max: 1_000 } as const;
/** How far in the past a `runAt` may lie (clock skew between caller and producer): it then runs now. */
export const RUN_AT_PAST_TOLERANCE_MS = 60_000;
/** How far ahead a job may be scheduled: 366 days. */
export const MAX_DELAY_MS = 366 * 86_400_000;

/**
 * The due time of a submission that asks for one (`runAt`, an ISO time, or `delayMs` from now),
 * checked against the bounds: undefined when it asks for none. Throws ApiError 400
 * `invalid_schedule` for both at once, a `runAt` more than RUN_AT_PAST_TOLERANCE_MS in the past
 * or one more than MAX_DELAY_MS ahead. The LangGraph API's `after_seconds` maps onto
 * `{ delayMs: after_seconds * 1000 }`.
 */
export function scheduledRunAt(ask: { runAt?: string; delayMs?: number }, now = Date.now()): Date | undefined {
  if (ask.runAt !== undefined && ask.delayMs !== undefined) {
    throw new ApiError(400, 'invalid_schedule', 'Send runAt or delayMs, not both.');
  }
  if (ask.delayMs !== undefined) {
    if (!Number.isFinite(ask.delayMs) || ask.delayMs < 0 || ask.delayMs > MAX_DELAY_MS) {
      throw new ApiError(400, 'invalid_schedule', `delayMs must be between 0 and ${MAX_DELAY_MS} (366 days).`);
    }
    return ask.delayMs === 0 ? undefined : new Date(now + ask.delayMs);
  }
  if (ask.runAt === undefined) return undefined;
  const at = Date.parse(ask.runAt);
  if (Number.isNaN(at)) throw new ApiError(400, 'invalid_schedule', `runAt "${ask.runAt}" is not an ISO 8601 time.`);
  if (at < now - RUN_AT_PAST_TOLERANCE_MS) {
    throw new ApiError(
      400,
      'invalid_schedule',
      `runAt ${ask.runAt} is more than ${RUN_AT_PAST_TOLERANCE_MS / 1000} s in the past; send a future time, or none to run now.`,
    );
  }
  if (at > now + MAX_DELAY_MS) throw new ApiError(400, 'invalid_schedule', `runAt ${ask.runAt} is more than 366 days ahead.`);
  return at <= now ? undefined : new Date(at);
}
