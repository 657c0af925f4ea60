import type pg from 'pg';
import { sealContext } from './crypto';
import type { Ledger } from './ledger';
import { toJob } from './rows';
import { run } from './sql';
import type { JobStatus } from './states';
import type { Job } from './types';

/** Where a delivery stands: to send (at `dueAt`), answered with a 2xx, or out of retries. */
export type WebhookDeliveryState = 'pending' | 'delivered' | 'gave_up';

/** One POST of a delivery and what came back: the receiver's HTTP status, or why none came. */
export interface WebhookAttempt {
  attempt: number;
  at: Date;
  statusCode: number | null;
  error: string | null;
}

/** One end of a run to announce (the outbox row), with its attempts. `deliveryId` is the receiver's idempotency key. */
export interface WebhookDelivery {
  deliveryId: string;
  /** The job's status at that end. */
  runStatus: JobStatus;
  endedAt: Date;
  state: WebhookDeliveryState;
  attempts: WebhookAttempt[];
  /** When the next attempt is due (pending only). */
  dueAt: Date | null;
  settledAt: Date | null;
}

/** A delivery claimed for sending: its end, the attempt it is, the job as it is now and the URL (opened). */
export interface ClaimedWebhook {
  deliveryId: string;
  runStatus: JobStatus;
  endedAt: Date;
  attempt: number;
  job: Job;
  url: string;
}

/** What an attempt came to, for `record`. */
export interface WebhookAnswer {
  statusCode: number | null;
  error: string | null;
  delivered: boolean;
  /** Wait before the next attempt when not delivered. */
  backoffMs: number;
  /** How long after the run's end attempts go on; past it the delivery gives up. */
  retryForMs: number;
}

/**
 * The webhook outbox in the ledger (migration 0022): a trigger writes one row per end of a run
 * that has a webhook, in the transaction of that end; a dispatcher claims due rows (SKIP LOCKED)
 * and records each attempt. The URL is sealed (`jobs.webhook`, bound to the job) when encryption is on.
 */
export class WebhookOutbox {
  constructor(private readonly ledger: Ledger) {}

  /** The stored form of a run's webhook URL (admission stores it): sealed bound to the job when encryption is on. */
  static sealed(ledger: Ledger, jobId: string, url: string): unknown {
    const codec = ledger.payloadCodec;
    return codec ? codec.seal(url, sealContext.jobWebhook(jobId)) : url;
  }

  /** Claims up to `limit` due deliveries for `claimMs` (the send's time limit and a margin). */
  async claim(limit: number, claimMs: number): Promise<ClaimedWebhook[]> {
    const codec = this.ledger.payloadCodec;
    const rows = (await this.q('claim_webhook_deliveries', [limit, claimMs])).rows;
    return rows.map((r) => ({
      deliveryId: r.webhook_delivery_id as string,
      runStatus: r.run_status as JobStatus,
      endedAt: r.run_ended_at as Date,
      attempt: Number(r.delivery_attempt),
      job: toJob(r, codec),
      url: String(codec ? codec.open(r.webhook, sealContext.jobWebhook(r.job_id as string)) : r.webhook),
    }));
  }

  /** Records attempt `attempt` of a delivery; returns the delivery's state, or undefined when another claim holds it now. */
  async record(deliveryId: string, attempt: number, answer: WebhookAnswer): Promise<WebhookDeliveryState | undefined> {
    const { statusCode, error, delivered, backoffMs, retryForMs } = answer;
    const r = await this.q('record_webhook_attempt', [deliveryId, attempt, statusCode, error, delivered, backoffMs, retryForMs]);
    return r.rows[0]?.state as WebhookDeliveryState | undefined;
  }

  /** Whether the job has a webhook, and its deliveries oldest first; undefined when there is no such job. */
  async ofJob(jobId: string): Promise<{ hasWebhook: boolean; deliveries: WebhookDelivery[] } | undefined> {
    const rows = (await this.q('list_webhook_deliveries', [jobId])).rows;
    if (rows.length === 0) return undefined;
    const deliveries = rows
      .filter((r) => r.delivery_id !== null)
      .map((r) => ({
        deliveryId: r.delivery_id as string,
        runStatus: r.run_status as JobStatus,
        endedAt: r.ended_at as Date,
        state: r.state as WebhookDeliveryState,
        attempts: (r.answers as Array<Record<string, unknown>>).map((a) => ({
          attempt: Number(a.attempt),
          at: new Date(a.at as string),
          statusCode: (a.statusCode as number | null) ?? null,
          error: (a.error as string | null) ?? null,
        })),
        dueAt: r.state === 'pending' ? (r.due_at as Date) : null,
        settledAt: (r.settled_at as Date | null) ?? null,
      }));
    return { hasWebhook: rows[0]?.has_webhook === true, deliveries };
  }

  private q(name: string, values: unknown[]): Promise<pg.QueryResult> {
    return run(this.ledger.pool, name, values);
  }
}
