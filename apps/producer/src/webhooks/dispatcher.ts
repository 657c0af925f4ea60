import type { ClaimedWebhook, WebhookOutbox } from '@runledger/ledger';
import { PeriodicPass } from '@runledger/queue';
import type { FastifyBaseLogger } from 'fastify';
import type { WebhookDestinations } from './destinations';
import { webhookPayload } from './payload';
import { postWebhook } from './send';
import { signedHeaders, tenantSecret } from './signing';

/** How the dispatcher sends and retries (the WEBHOOK_* settings). */
export interface WebhookDelivery {
  /** Time between sending passes; 0 = this producer sends none (another one does). */
  tickMs: number;
  /** Longest one POST may take. */
  timeoutMs: number;
  /** How long after a run's end attempts go on. */
  retryForMs: number;
  /** Wait after the first failed attempt; doubled after each further one, up to `backoffMaxMs`. */
  backoffMs: number;
  backoffMaxMs: number;
  /** Deliveries claimed per pass. */
  batch: number;
}

export interface WebhookDispatcherOptions extends WebhookDelivery {
  outbox: WebhookOutbox;
  destinations: WebhookDestinations;
  signingKey: string;
  log: FastifyBaseLogger;
}

/** Time a claim holds a delivery beyond the POST's own limit (recording the answer). */
const CLAIM_MARGIN_MS = 5_000;

/** The wait before attempt `attempt + 1`: exponential, capped, with up to 20% jitter so retries of many runs spread out. */
export function backoffAfter(attempt: number, base: number, max: number, random = Math.random): number {
  const exp = Math.min(max, base * 2 ** Math.min(attempt - 1, 30));
  return Math.round(exp * (0.8 + 0.2 * random()));
}

/**
 * Sends the ledger's webhook outbox: every `tickMs` it claims due deliveries (SKIP LOCKED, so
 * producers running at once never send the same one at once), POSTs each signed, and records the
 * answer; a failed one is due again after a backoff until the retry window closes. At least once:
 * a producer killed between a receiver's 2xx and the record sends again after the claim ran out,
 * with the same `webhook-id`.
 */
export class WebhookDispatcher {
  private readonly passes: PeriodicPass<number>;

  constructor(private readonly options: WebhookDispatcherOptions) {
    // send() logs its own failures; the pass never throws.
    this.passes = new PeriodicPass(
      () => this.send(),
      options.tickMs,
      () => {},
    );
  }

  start(): void {
    this.passes.start();
  }

  stop(): Promise<void> {
    return this.passes.stop();
  }

  /** One sending pass now (or the one in flight); resolves with how many deliveries it tried. Never throws. */
  runOnce(): Promise<number> {
    return this.passes.runOnce();
  }

  private async send(): Promise<number> {
    const { outbox, log, batch, timeoutMs } = this.options;
    try {
      const claimed = await outbox.claim(batch, timeoutMs + CLAIM_MARGIN_MS);
      await Promise.all(claimed.map((c) => this.deliver(c)));
      return claimed.length;
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'webhook pass failed; the next one retries');
      return 0;
    }
  }

  private async deliver(claimed: ClaimedWebhook): Promise<void> {
    const { outbox, destinations, signingKey, timeoutMs, retryForMs, backoffMs, backoffMaxMs, log } = this.options;
    const sentAt = new Date();
    const body = JSON.stringify(webhookPayload(claimed, sentAt));
    const headers = signedHeaders(tenantSecret(signingKey, claimed.job.tenant), claimed.deliveryId, Math.floor(sentAt.getTime() / 1000), body);
    const outcome = await postWebhook(destinations, claimed.url, body, headers, timeoutMs);
    const delivered = outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300;
    const backoff = backoffAfter(claimed.attempt, backoffMs, backoffMaxMs);
    const state = await outbox.record(claimed.deliveryId, claimed.attempt, { ...outcome, delivered, backoffMs: backoff, retryForMs });
    const fields = { jobId: claimed.job.jobId, deliveryId: claimed.deliveryId, attempt: claimed.attempt, ...outcome, state };
    if (delivered) log.info(fields, 'webhook delivered');
    else log.warn(fields, state === 'gave_up' ? 'webhook not delivered; retry window closed' : 'webhook not delivered; will retry');
  }
}
