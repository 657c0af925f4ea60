/**
 * A pass that runs every `intervalMs` and never overlaps itself: a tick that comes while the
 * previous pass still runs is skipped (the pass runs again at the next tick after it ended), and
 * `runOnce()` called meanwhile returns the pass in flight instead of starting another. `stop()`
 * clears the timer and waits for the pass in flight. The reconciler's sweep and the producer's
 * cron ticker, the worker's retention and its read of graph limits all run on one; a pass that throws is reported to `onError`, and the next tick
 * runs as usual.
 */
export class PeriodicPass<T> {
  private timer: NodeJS.Timeout | undefined;
  private first: NodeJS.Timeout | undefined;
  private running: Promise<T> | undefined;

  constructor(
    private readonly pass: () => Promise<T>,
    /** Time between ticks; 0 or less never starts the timer (`runOnce` still works). */
    readonly intervalMs: number,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Starts the timer, with a first pass after `firstAfterMs` when given (sooner than a long interval); a second call changes nothing. */
  start(firstAfterMs?: number): void {
    if (this.intervalMs <= 0 || this.timer) return;
    const tick = () => {
      if (!this.running) this.runOnce().catch(this.onError);
    };
    this.timer = setInterval(tick, this.intervalMs);
    if (firstAfterMs !== undefined && firstAfterMs < this.intervalMs) this.first = setTimeout(tick, firstAfterMs);
  }

  /** One pass now, or the one in flight. */
  runOnce(): Promise<T> {
    this.running ??= this.pass().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /** Stops the timer and resolves once the pass in flight (if any) has ended, whatever its outcome. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    clearTimeout(this.first);
    this.timer = undefined;
    await this.running?.catch(() => {});
  }
}
