import type pg from 'pg';
import type { PayloadCodec } from './crypto';
import { type Queryable, wrapDbError } from './db';
import { sql } from './sql';

export interface LedgerOptions {
  /** Lease length judged by the database clock. Default 6000 ms. */
  leaseTtlMs?: number;
  /**
   * Encryption at rest (AesGcmPayloadCodec from RUNLEDGER_ENCRYPTION_KEY): payloads, metadata and
   * notes sealed on write and opened on read, idempotency keys and request fingerprints stored as
   * keyed digests. Default none: stored as they are.
   */
  crypto?: PayloadCodec;
  /**
   * Natural group commit of `admit` calls made without a caller transaction and without
   * `multitask: "reject"`: while `maxInFlight` admission statements are running, further calls
   * wait and go together as the next statement (no timer). Default on; `false` commits each
   * call alone. `recordEnqueued` and `markEnqueued` calls are coalesced the same way.
   */
  coalesceAdmissions?: false | { maxInFlight?: number; maxBatch?: number };
}

/**
 * Statements prepared once per connection (all on the hot path, none with optional filters).
 * Not here: statements that join a list of job ids to `jobs` (heartbeat.sql, mark_enqueued.sql).
 * Prepared, they settle on a generic plan that PostgreSQL keeps until an ANALYZE of `jobs`; made
 * while the ledger was small, that plan scans all of `jobs` on every call as it grows
 * (test/plan-growth.int.test.ts). Planned per call they cost a plan each, about 0.1–0.2 ms, once
 * per heartbeat interval or per redelivery.
 */
const PREPARED = new Set([
  'admit_jobs',
  'record_enqueued',
  'claim_lease',
  'append_event',
  'record_checkpoint',
  'end_attempt',
  'get_job',
  'find_effect',
  'record_effect_intent',
  'settle_effect',
  'list_pending_effects',
  // Every worker runs these each sweep interval (1 s): planning them was most of their server CPU.
  'fold_ledger_counts',
  'roll_up_event_minutes',
  'expire_leases',
  'list_undelivered',
  'list_limited_graphs',
  // Every streamed or joined run's shared tail polls it (apps/producer run-tails.ts).
  'tail_run_stream',
]);

export const json = (v: unknown) => (v === undefined ? null : JSON.stringify(v));

/** The columns stored as keyed digests when encryption is on (PayloadCodec.digests' `purpose`). */
export const DIGESTED = { idempotencyKey: 'jobs.idempotency_key', requestHash: 'jobs.request_hash' } as const;

/** What every part of the ledger shares: the pool, the payload codec, and how a statement runs. */
export class LedgerCore {
  readonly leaseTtlMs: number;
  protected readonly crypto: PayloadCodec | undefined;

  /** The codec sealing payloads at rest (checkpoint savers seal with it too); undefined when encryption is off. */
  get payloadCodec(): PayloadCodec | undefined {
    return this.crypto;
  }

  constructor(
    readonly pool: pg.Pool,
    options: LedgerOptions = {},
  ) {
    this.leaseTtlMs = options.leaseTtlMs ?? 6_000;
    this.crypto = options.crypto;
  }

  /** The stored form of a payload column: sealed when a codec is set; undefined stays undefined (SQL NULL, "unchanged"). */
  protected seal(value: unknown, context: string): unknown {
    return value === undefined || !this.crypto ? value : this.crypto.seal(value, context);
  }

  /** The stored form of a digested column: the current key's digest when a codec is set, else the value itself. */
  protected digest(value: string, purpose: string): string {
    return this.crypto ? (this.crypto.digests(value, purpose)[0] as string) : value;
  }

  /**
   * Every stored form `value` may have: its digest under each configured key (rows stored before
   * a rotation) and the value itself (rows stored while encryption was off).
   */
  protected storedForms(value: string, purpose: string): string[] {
    return this.crypto ? [...this.crypto.digests(value, purpose), value] : [value];
  }

  protected async q(name: string, values: unknown[], db: Queryable = this.pool): Promise<pg.QueryResult> {
    try {
      // Hot-path writes run as named statements: parsing and planning them was over half of
      // their server CPU (bench/admit-cost.ts). Reads with optional filters stay unnamed.
      return await (db as pg.Pool).query({ name: PREPARED.has(name) ? `runledger_${name}` : undefined, text: sql(name), values });
    } catch (err) {
      throw wrapDbError(err);
    }
  }

  /** Runs `fn` in one transaction on one pooled client. */
  async inTransaction<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect().catch((err) => {
      throw wrapDbError(err);
    });
    try {
      await client.query('BEGIN');
      const out = await fn(client);
      await client.query('COMMIT');
      return out;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  }
}
