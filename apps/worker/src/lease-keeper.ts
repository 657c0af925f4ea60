import { LeaseLostError, type Ledger } from '@runledger/ledger';

interface Held {
  token: number;
  controller: AbortController;
  /** Local time by which the lease may have ended in the database: the last renewal's send time + TTL − margin. */
  validUntil: number;
}

/**
 * Keeps the leases of one worker alive: one batched heartbeat statement every interval for all
 * of them. A lease the database refuses to renew (newer claim, cancel, expiry) aborts its run
 * with a LeaseLostError as the reason, within one interval. A lease not renewed in time because
 * PostgreSQL is unreachable (a partition, a hung connection) aborts its run too, by the worker's
 * own clock, before the database could let another worker claim it: the run must not start an
 * effect or write anything once another holder may exist.
 */
export class LeaseKeeper {
  private readonly held = new Map<string, Held>();
  private timer: NodeJS.Timeout | undefined;
  private expiryTimer: NodeJS.Timeout | undefined;
  /** How long a renewal counts locally: the TTL less half an interval, for timer and scheduling lag. */
  private readonly validMs: number;
  private beating: Promise<void> | undefined;
  /** Time between the last two successful heartbeats minus the interval (ms); a lag gauge. */
  lastLagMs = 0;
  private lastBeatAt = 0;

  constructor(
    private readonly ledger: Ledger,
    private readonly workerId: string,
    private readonly intervalMs: number,
    private readonly onError: (err: unknown) => void = () => {},
  ) {
    this.validMs = ledger.leaseTtlMs - intervalMs / 2;
  }

  start(): void {
    this.timer ??= setInterval(() => void this.beat(), this.intervalMs);
    // Checked apart from the heartbeat, which may hang on a dead connection.
    this.expiryTimer ??= setInterval(() => this.expire(), Math.min(100, this.intervalMs));
  }

  stop(): void {
    clearInterval(this.timer);
    clearInterval(this.expiryTimer);
    this.timer = undefined;
    this.expiryTimer = undefined;
  }

  /**
   * Starts watching a freshly claimed lease; the returned signal aborts when it is lost.
   * `claimSentAt`: when the claim statement was sent (the database's lease runs from a later moment).
   */
  hold(jobId: string, token: number, claimSentAt = Date.now()): AbortController {
    const controller = new AbortController();
    this.held.set(jobId, { token, controller, validUntil: claimSentAt + this.validMs });
    return controller;
  }

  /** Aborts every run whose lease was not renewed in time (no heartbeat reached the database). */
  expire(now = Date.now()): void {
    for (const [jobId, h] of this.held) {
      if (now < h.validUntil) continue;
      this.held.delete(jobId);
      h.controller.abort(new LeaseLostError(jobId, h.token, 'no heartbeat renewed the lease in time; the lease'));
    }
  }

  release(jobId: string): void {
    this.held.delete(jobId);
  }

  get size(): number {
    return this.held.size;
  }

  /** Aborts every held run with `reason` (drain on shutdown). */
  abortAll(reason: unknown): void {
    for (const h of this.held.values()) h.controller.abort(reason);
  }

  /** One heartbeat now; overlapping calls share the one in flight. */
  beat(): Promise<void> {
    this.beating ??= this.renew().finally(() => {
      this.beating = undefined;
    });
    return this.beating;
  }

  private async renew(): Promise<void> {
    const leases = [...this.held].map(([jobId, h]) => ({ jobId, token: h.token }));
    const sentAt = Date.now();
    try {
      const lost = new Set(await this.ledger.heartbeat(this.workerId, leases));
      const now = Date.now();
      if (this.lastBeatAt) this.lastLagMs = Math.max(0, now - this.lastBeatAt - this.intervalMs);
      this.lastBeatAt = now;
      for (const { jobId, token } of leases) {
        const h = this.held.get(jobId);
        if (!h || h.token !== token) continue;
        if (!lost.has(jobId)) {
          h.validUntil = Math.max(h.validUntil, sentAt + this.validMs);
          continue;
        }
        this.held.delete(jobId);
        h.controller.abort(new LeaseLostError(jobId, h.token, 'heartbeat'));
      }
    } catch (err) {
      // PostgreSQL unreachable: keep running while the leases last; `expire` stops the runs
      // whose lease outlives its last renewal.
      this.onError(err);
    }
  }
}
