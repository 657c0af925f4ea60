import { Crons, type Ledger } from '@runledger/ledger';
import { type DeliveryData, PeriodicPass } from '@runledger/queue';
import type { Queue } from 'bullmq';
import type { FastifyBaseLogger } from 'fastify';
import { sendAdmittedWithin } from './delivery';

export interface CronTickerOptions {
  ledger: Ledger;
  queue: Queue<DeliveryData>;
  /** Time between firing passes. */
  tickMs: number;
  /** How late a scheduled time may be handled and still count as on time (CRON_MISFIRE_GRACE_MS). */
  graceMs: number;
  enqueueTimeoutMs: number;
  log: FastifyBaseLogger;
}

/**
 * Fires due crons on a timer (`Crons.fireDue`: admission, record and advance in one transaction,
 * under SKIP LOCKED), then hands the admitted jobs to the queue best effort. Every producer runs
 * one; the ledger makes sure each scheduled time is handled once.
 */
export class CronTicker {
  private readonly passes: PeriodicPass<void>;
  private readonly crons: Crons;

  constructor(private readonly options: CronTickerOptions) {
    this.crons = new Crons(options.ledger);
    // fire() logs its own failures; the pass never throws.
    this.passes = new PeriodicPass(
      () => this.fire(),
      options.tickMs,
      () => {},
    );
  }

  /** Fires every `tickMs`; with `tickMs` 0 never (another producer does). */
  start(): void {
    this.passes.start();
  }

  stop(): Promise<void> {
    return this.passes.stop();
  }

  /** One firing pass now (or the one in flight); never throws (a failed pass is logged and the next one retries). */
  tick(): Promise<void> {
    return this.passes.runOnce();
  }

  private async fire(): Promise<void> {
    const { ledger, queue, log } = this.options;
    try {
      const admitted = await this.crons.fireDue({ graceMs: this.options.graceMs });
      if (admitted.length === 0) return;
      log.info({ jobs: admitted.map((j) => j.jobId) }, 'cron firings admitted');
      await sendAdmittedWithin(queue, ledger, admitted, this.options.enqueueTimeoutMs, log);
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'cron firing pass failed; the next one retries');
    }
  }
}
