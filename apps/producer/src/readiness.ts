/**
 * How long a /readyz answer is reused. A load balancer, a kubelet and a dashboard may each poll
 * /readyz many times a second; PostgreSQL and the queue are probed at most once per this window.
 */
export const READINESS_CACHE_MS = 1_000;

/**
 * Wraps `probe` so it runs at most once per `ttlMs`, counted from when its answer arrived: callers
 * within that time, and callers arriving while it runs, share its answer. `probe` must not reject.
 */
export function cachedProbe<T>(probe: () => Promise<T>, ttlMs: number, now: () => number = Date.now): () => Promise<T> {
  let last: { answer: Promise<T>; settledAt?: number } | undefined;
  return () => {
    const fresh = last && (last.settledAt === undefined || now() - last.settledAt < ttlMs);
    if (!last || !fresh) {
      const entry: { answer: Promise<T>; settledAt?: number } = { answer: probe() };
      void entry.answer.finally(() => {
        entry.settledAt = now();
      });
      last = entry;
    }
    return last.answer;
  };
}
