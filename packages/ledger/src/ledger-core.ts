import type pg from 'pg';
import type { PayloadCodec } from './crypto';
import type { Queryable } from './db';
import { inTransaction, run } from './sql';

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

  protected q(name: string, values: unknown[], db: Queryable = this.pool): Promise<pg.QueryResult> {
    return run(db, name, values);
  }

  /** Runs `fn` in one transaction on one pooled client. */
  inTransaction<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, fn);
  }
}
