import { Crons, type Ledger, type RateTake } from '@runledger/ledger';
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
  /**
   * Takes a token from a tenant's rate bucket for each time a cron admits (the bucket its
   * requests spend: RATE_LIMIT_PER_SECOND); a refused take records the time as failed. Default
   * none: firings are not charged.
   */
  charge?: (tenant: string) => Promise<RateTake>;
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
    const { ledger, queue, log, charge } = this.options;
    try {
      const { admitted, failed } = await this.crons.fireDue({ graceMs: this.options.graceMs, charge: charge && chargeOrLet(charge, log) });
      for (const { cron, reason } of failed) log.warn({ cronId: cron.cronId, tenant: cron.tenant, reason }, 'cron firing failed; the other crons fired');
      if (admitted.length === 0) return;
      log.info({ jobs: admitted.map((j) => j.jobId) }, 'cron firings admitted');
      await sendAdmittedWithin(queue, ledger, admitted, this.options.enqueueTimeoutMs, log);
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'cron firing pass failed; the next one retries');
    }
  }
}

/** As for a request: a bucket that cannot answer (PostgreSQL down) does not refuse the firing. */
function chargeOrLet(charge: (tenant: string) => Promise<RateTake>, log: FastifyBaseLogger): (tenant: string) => Promise<RateTake> {
  return (tenant) =>
    charge(tenant).catch((err: Error) => {
      log.warn({ err: err.message }, 'cron firing not charged: rate limit not checked');
      return { ok: true };
    });
}
