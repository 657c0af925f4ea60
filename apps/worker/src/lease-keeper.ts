import { LeaseLostError, type Ledger } from '@runledger/ledger';

interface Held {
  token: number;
  controller: AbortController;
}

/**
 * Keeps the leases of one worker alive: one batched heartbeat statement every interval for all
 * of them. A lease the database refuses to renew (newer claim, cancel, expiry) aborts its run
 * with a LeaseLostError as the reason, within one interval.
 */
export class LeaseKeeper {
  private readonly held = new Map<string, Held>();
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;
  /** Time between the last two successful heartbeats minus the interval (ms); a lag gauge. */
  lastLagMs = 0;
  private lastBeatAt = 0;

  constructor(
    private readonly ledger: Ledger,
    private readonly workerId: string,
    private readonly intervalMs: number,
    private readonly onError: (err: unknown) => void = () => {},
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.beat(), this.intervalMs);
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Starts watching a freshly claimed lease; the returned signal aborts when it is lost. */
  hold(jobId: string, token: number): AbortController {
    const controller = new AbortController();
    this.held.set(jobId, { token, controller });
    return controller;
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
    try {
      const lost = await this.ledger.heartbeat(this.workerId, leases);
      const now = Date.now();
      if (this.lastBeatAt) this.lastLagMs = Math.max(0, now - this.lastBeatAt - this.intervalMs);
      this.lastBeatAt = now;
      for (const jobId of lost) {
        const h = this.held.get(jobId);
        if (!h) continue;
        this.held.delete(jobId);
        h.controller.abort(new LeaseLostError(jobId, h.token, 'heartbeat'));
      }
    } catch (err) {
      // PostgreSQL unreachable: keep running; if the outage outlasts the lease, the next
      // successful heartbeat reports the lease lost and the run stops then.
      this.onError(err);
    }
  }
}
