import type pg from 'pg';
import { AesGcmPayloadCodec } from './crypto';
import { LedgerCore } from './ledger-core';
import { RESEAL_TABLES, type ResealTable } from './reseal-tables';

/** Where a re-seal stands in one table (reseal_progress): `position` is the key of the last row handled, null when finished or not started. */
export interface ResealPosition {
  table: string;
  targetKid: string;
  position: unknown[] | null;
  walked: number;
  resealed: number;
  skipped: number;
  finishedAt: Date | null;
  updatedAt: Date;
}

/** One table's sealed values by the key that sealed them (`unbound`: checkpoint values of the older format). */
export interface SealedCounts {
  table: string;
  rows: number;
  /** Values not sealed with the current key, by key id; each is one value the re-seal would re-seal. */
  stale: Record<string, number>;
}

/** What one re-seal did, over all tables. */
export interface ResealReport {
  walked: number;
  resealed: number;
  /** Values changed by a writer between read and swap (left as the writer stored them; a later run picks them up if needed). */
  conflicts: number;
  /** Values that could not be opened (a key not configured, or moved / altered): left as they are. */
  unreadable: number;
  /** The first few unreadable values' errors. */
  errors: string[];
}

/** Progress of a running re-seal: called after each batch. */
export interface ResealTick {
  table: string;
  walked: number;
  total: number;
  resealed: number;
}

const toNumber = (v: unknown) => Number(v ?? 0);

/**
 * Key rotation of the sealed values at rest: re-seals every value sealed with an older key (and
 * every checkpoint value of the older unbound format) with the codec's current key, bound to its
 * row. Walks each table in key order (keyset pagination, `batchSize` rows a page), swaps values
 * in with a compare-and-swap on the old ciphertext (one short statement per batch: no long
 * locks, never over a value a worker wrote meanwhile), and records its position after each
 * batch so a stopped run resumes there. Safe to run while producers and workers write, once
 * they all seal with the new current key.
 */
export class KeyRotation extends LedgerCore {
  private readonly codec: AesGcmPayloadCodec;

  /** Throws when `codec` is not an AesGcmPayloadCodec (encryption off). */
  constructor(pool: pg.Pool, codec: unknown) {
    super(pool, { crypto: codec as AesGcmPayloadCodec });
    if (!(codec instanceof AesGcmPayloadCodec)) throw new Error('Key rotation needs RUNLEDGER_ENCRYPTION_KEY: encryption at rest is off.');
    this.codec = codec;
  }

  /** Where each table's re-seal stands (tables never walked are absent). */
  async positions(): Promise<ResealPosition[]> {
    return (await this.q('read_reseal_progress', [])).rows.map((r) => ({
      table: r.table_name,
      targetKid: r.target_kid,
      position: r.position,
      walked: toNumber(r.walked),
      resealed: toNumber(r.resealed),
      skipped: toNumber(r.skipped),
      finishedAt: r.finished_at,
      updatedAt: r.updated_at,
    }));
  }

  /** Rows per table (the progress bar's totals). */
  async rowCounts(): Promise<Record<string, number>> {
    const row = (await this.q('count_reseal_rows', [])).rows[0] ?? {};
    return Object.fromEntries(RESEAL_TABLES.map((t) => [t.table, toNumber(row[t.table])]));
  }

  /** Counts the values not sealed with the current key, table by table (reads every row; writes nothing). */
  async status(batchSize = 500): Promise<SealedCounts[]> {
    const out: SealedCounts[] = [];
    for (const t of RESEAL_TABLES) {
      const counts: SealedCounts = { table: t.table, rows: 0, stale: {} };
      await this.walk(t, null, batchSize, async (rows) => {
        counts.rows += rows.length;
        for (const kid of rows.flatMap((r) => t.stale(r, this.codec.currentKeyId))) counts.stale[kid] = (counts.stale[kid] ?? 0) + 1;
      });
      out.push(counts);
    }
    return out;
  }

  /** Re-seals every stale value; resumes each table where an unfinished run for the same key stopped. */
  async run(options: { batchSize?: number; onBatch?: (tick: ResealTick) => void; signal?: AbortSignal } = {}): Promise<ResealReport> {
    const batchSize = options.batchSize ?? 200;
    const kid = this.codec.currentKeyId;
    const report: ResealReport = { walked: 0, resealed: 0, conflicts: 0, unreadable: 0, errors: [] };
    const totals = await this.rowCounts();
    const saved = new Map((await this.positions()).map((p) => [p.table, p]));
    for (const t of RESEAL_TABLES) {
      const prior = saved.get(t.table);
      const resume = prior && prior.targetKid === kid && prior.position !== null && prior.finishedAt === null ? prior : undefined;
      const tally = { walked: resume?.walked ?? 0, resealed: resume?.resealed ?? 0, skipped: resume?.skipped ?? 0 };
      const done = await this.walk(
        t,
        resume?.position ?? null,
        batchSize,
        async (rows, last) => {
          const batch = await this.resealBatch(t, rows, report);
          tally.walked += rows.length;
          tally.resealed += batch.resealed;
          tally.skipped += batch.skipped;
          report.walked += rows.length;
          await this.q('save_reseal_progress', [t.table, kid, JSON.stringify(last), tally.walked, tally.resealed, tally.skipped, false]);
          options.onBatch?.({ table: t.table, walked: tally.walked, total: Math.max(totals[t.table] ?? 0, tally.walked), resealed: tally.resealed });
        },
        options.signal,
      );
      if (!done) return report;
      await this.q('save_reseal_progress', [t.table, kid, null, tally.walked, tally.resealed, tally.skipped, true]);
    }
    return report;
  }

  /** Re-seals one page's stale values and swaps them in; counts into `report`. */
  private async resealBatch(t: ResealTable, rows: Record<string, unknown>[], report: ResealReport) {
    const kid = this.codec.currentKeyId;
    const params: unknown[] = [];
    let unreadable = 0;
    let wanted = 0;
    for (const row of rows) {
      const stale = t.stale(row, kid).length;
      if (stale === 0) continue;
      try {
        const p = t.reseal(row, this.codec);
        params.push(p);
        // Units of the swap's answer: columns of a jsonb row, the one value of a checkpoint row.
        wanted += p.new !== null && typeof p.new === 'object' ? Object.keys(p.new).length : 1;
      } catch (err) {
        unreadable += stale;
        if (report.errors.length < 5) report.errors.push((err as Error).message);
      }
    }
    const swapped = params.length === 0 ? 0 : (await this.q(`reseal_${t.table}`, [JSON.stringify(params)])).rows.reduce((n, r) => n + toNumber(r.swapped), 0);
    report.resealed += swapped;
    report.conflicts += wanted - swapped;
    report.unreadable += unreadable;
    return { resealed: swapped, skipped: wanted - swapped + unreadable };
  }

  /** Calls `fn` with each page of `t` after `from`; false when `signal` stopped it first. */
  private async walk(
    t: ResealTable,
    from: unknown[] | null,
    batchSize: number,
    fn: (rows: Record<string, unknown>[], last: unknown[]) => Promise<void>,
    signal?: AbortSignal,
  ): Promise<boolean> {
    let cursor = from;
    for (;;) {
      if (signal?.aborted) return false;
      const { rows } = await this.q(`reseal_page_${t.table}`, [cursor === null ? null : JSON.stringify(cursor), batchSize]);
      const last = rows.at(-1);
      if (!last) return true;
      cursor = t.key(last);
      await fn(rows, cursor);
      if (rows.length < batchSize) return true;
    }
  }
}
