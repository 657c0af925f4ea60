import { Crons, type Ledger } from '@runledger/ledger';
import type { DeliveryData } from '@runledger/queue';
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
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private readonly crons: Crons;

  constructor(private readonly options: CronTickerOptions) {
    this.crons = new Crons(options.ledger);
  }

  start(): void {
    if (this.options.tickMs <= 0) return;
    this.timer ??= setInterval(() => {
      this.running ??= this.tick().finally(() => {
        this.running = undefined;
      });
    }, this.options.tickMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** One firing pass now; never throws (a failed pass is logged and the next one retries). */
  async tick(): Promise<void> {
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
