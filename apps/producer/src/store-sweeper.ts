import { type Ledger, LedgerStore } from '@runledger/ledger';
import { PeriodicPass } from '@runledger/queue';
import type { FastifyBaseLogger } from 'fastify';

/**
 * Deletes the store's expired items (langgraph.json `store.ttl.sweep_interval_minutes`), in
 * batches, on a PeriodicPass. Reads never return an expired item whether or not it was swept;
 * the sweep only frees the rows. Every producer may run it (the delete skips locked rows).
 */
export class StoreSweeper {
  private readonly pass: PeriodicPass<number>;
  private readonly store: LedgerStore;

  constructor(
    ledger: Ledger,
    intervalMs: number,
    private readonly log: FastifyBaseLogger,
  ) {
    // The sweep needs no tenant: it deletes by expiry across all of them.
    this.store = new LedgerStore(ledger.pool, { tenant: '' });
    this.pass = new PeriodicPass(
      () => this.sweep(),
      intervalMs,
      () => {},
    );
  }

  start(): void {
    this.pass.start(Math.min(this.pass.intervalMs, 10_000));
  }

  stop(): Promise<void> {
    return this.pass.stop();
  }

  /** One sweep now; how many items it deleted (0 when it failed, logged). */
  runOnce(): Promise<number> {
    return this.pass.runOnce();
  }

  private async sweep(): Promise<number> {
    let total = 0;
    try {
      for (let n = await this.store.sweepExpired(); n > 0; n = await this.store.sweepExpired()) total += n;
      if (total > 0) this.log.info({ deleted: total }, 'expired store items swept');
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'store sweep failed; the next one retries');
    }
    return total;
  }
}
