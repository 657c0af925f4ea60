import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { cronFiringKey, type Decision, decideFirings, dueTimes, nextCronTime } from './cron-schedule';

export type { Cron, CronFiring, CronPatch, CronSearch, CronsOptions, FireOptions, NewCron } from './cron-types';

import {
  type Cron,
  type CronFiring,
  type CronPatch,
  type CronSearch,
  type CronsOptions,
  type FireOptions,
  MAX_REASON_CHARS,
  type NewCron,
  toCron,
} from './cron-types';
import { sealContext } from './crypto';
import type { Queryable } from './db';
import { LedgerError } from './errors';
import type { Ledger } from './ledger';
import { json } from './ledger-core';
import { run } from './sql';
import { checkThreadKey, DEFAULT_TENANT } from './threads';
import type { Job } from './types';

export {
  type CronOutcome,
  cronFiringKey,
  decideFirings,
  MISSED_POLICIES,
  type MissedPolicy,
  nextCronTime,
  shortestCronInterval,
} from './cron-schedule';

/** One recorded time: its outcome, the job it admitted, why it failed. */
interface Firing extends Decision {
  jobId: string | null;
  reason: string | null;
}

const reasonOf = (err: unknown) => (err instanceof Error ? err.message : String(err)).slice(0, MAX_REASON_CHARS);

/**
 * Crons in PostgreSQL: definitions, and `fireDue`, which every producer calls on a timer. Each
 * due cron is locked (SKIP LOCKED), its due times are admitted through the ledger with the key
 * `cron:<id>:<scheduled time>` and recorded in `cron_firings`, and its next time advanced, all
 * in one transaction: two producers, a restart or a lost queue never fire a time twice, and
 * every time ends up recorded (admitted, caught up, missed or failed).
 */
export class Crons {
  constructor(
    private readonly ledger: Ledger,
    private readonly options: CronsOptions = {},
  ) {}

  /** The stored form of a cron's input or metadata: sealed, bound to the cron, when encryption is on. */
  private seal(value: unknown, context: string): unknown {
    const codec = this.ledger.payloadCodec;
    return codec ? codec.seal(value, context) : value;
  }

  /** The cron with its input and metadata opened (values stored before encryption pass through). Throws when one cannot be opened. */
  private opened(cron: Cron): Cron {
    const codec = this.ledger.payloadCodec;
    if (!codec) return cron;
    const metadata = codec.open(cron.metadata, sealContext.cronMetadata(cron.cronId)) as Record<string, unknown>;
    return { ...cron, input: codec.open(cron.input, sealContext.cronInput(cron.cronId)), metadata };
  }

  private q(name: string, values: unknown[], db: Queryable = this.ledger.pool): Promise<pg.QueryResult> {
    return run(db, name, values);
  }

  /**
   * Stores a cron; its first firing is the first scheduled time after now. Throws INVALID_REQUEST
   * for a bad schedule or time zone and for a thread id or tenant admission refuses (the same
   * check), LIMIT_REACHED when the tenant has `maxPerTenant` crons.
   */
  async create(def: NewCron): Promise<Cron> {
    const tenant = def.tenant ?? DEFAULT_TENANT;
    checkThreadKey(tenant, def.threadId ?? undefined);
    const timezone = def.timezone ?? 'UTC';
    const next = nextCronTime(def.schedule, timezone, new Date());
    const cap = this.options.maxPerTenant ?? null;
    const cronId = randomUUID();
    const values = [
      cronId,
      tenant,
      def.graph,
      def.schedule,
      timezone,
      json(this.seal(def.input ?? null, sealContext.cronInput(cronId))),
      def.threadId ?? null,
      json(this.seal(def.metadata ?? {}, sealContext.cronMetadata(cronId))),
      def.missed ?? 'run-once',
      def.enabled ?? true,
      next,
      cap,
      def.assistantId ?? null,
      def.endTime ?? null,
    ];
    const row = await this.ledger.inTransaction(async (client) => {
      await this.q('lock_tenant_crons', [tenant], client);
      return (await this.q('insert_cron', values, client)).rows[0];
    });
    if (!row) throw new LedgerError('LIMIT_REACHED', `Tenant "${tenant}" has ${cap} crons, the most allowed (CRON_MAX_PER_TENANT); delete one first.`);
    return this.opened(toCron(row));
  }

  /** One page of crons, oldest first; pass `nextCursor` back as `cursor` for the next page (null: no more). */
  async list(tenant?: string, page: { limit?: number; cursor?: string } = {}): Promise<{ crons: Cron[]; nextCursor: string | null }> {
    const limit = page.limit ?? 500;
    const [us, id] = page.cursor ? splitCursor(page.cursor) : [null, null];
    const rows = (await this.q('list_crons', [tenant ?? null, us, id, limit])).rows;
    const last = rows[rows.length - 1];
    return { crons: rows.map((r) => this.opened(toCron(r))), nextCursor: rows.length === limit && last ? `${last.created_us}_${last.cron_id}` : null };
  }

  /** Throws LedgerError NOT_FOUND when there is no such cron for `tenant`. */
  async get(cronId: string, tenant?: string): Promise<Cron> {
    const row = (await this.q('get_cron', [cronId, tenant ?? null])).rows[0];
    if (!row) throw new LedgerError('NOT_FOUND', `No cron ${cronId}.`);
    return this.opened(toCron(row));
  }

  /** Crons matching `s` (default newest first, 10); with their input and metadata opened. */
  async search(s: CronSearch = {}): Promise<Cron[]> {
    const values = [...this.filter(s), Math.min(Math.max(s.limit ?? 10, 1), 1000), Math.max(s.offset ?? 0, 0), s.sortBy ?? 'created_at', s.sortOrder ?? 'desc'];
    return (await this.q('search_crons', values)).rows.map((r) => this.opened(toCron(r)));
  }

  /** How many crons match the filters of `s`. */
  async count(s: Omit<CronSearch, 'limit' | 'offset' | 'sortBy' | 'sortOrder'> = {}): Promise<number> {
    return (await this.q('count_crons', this.filter(s))).rows[0].n as number;
  }

  private filter(s: CronSearch): unknown[] {
    return [s.tenant ?? null, s.assistantId ?? null, s.threadId ?? null, s.enabled ?? null, s.assistantsOnly === true];
  }

  /**
   * Changes a cron (throws like create). A new schedule or time zone, or enabling a disabled cron, restarts it from
   * now: times passed while it was off are neither fired nor recorded (it was off on purpose).
   */
  async update(cronId: string, patch: CronPatch, tenant?: string): Promise<Cron> {
    const current = await this.get(cronId, tenant);
    // A new input is checked as admission checks it; the thread id is the stored one.
    if (patch.input !== undefined) checkThreadKey(current.tenant, current.threadId ?? undefined);
    const schedule = patch.schedule ?? current.schedule;
    const timezone = patch.timezone ?? current.timezone;
    const restart = patch.schedule !== undefined || patch.timezone !== undefined || (patch.enabled === true && !current.enabled);
    const next = restart ? nextCronTime(schedule, timezone, new Date()) : null;
    const values = [
      cronId,
      tenant ?? null,
      patch.schedule ?? null,
      patch.timezone ?? null,
      patch.input === undefined ? null : json(this.seal(patch.input, sealContext.cronInput(cronId))),
      patch.missed ?? null,
      patch.enabled ?? null,
      next,
      patch.metadata === undefined ? null : json(this.seal(patch.metadata, sealContext.cronMetadata(cronId))),
      patch.endTime !== undefined,
      patch.endTime ?? null,
    ];
    const row = (await this.q('update_cron', values)).rows[0];
    if (!row) throw new LedgerError('NOT_FOUND', `No cron ${cronId}.`);
    return this.opened(toCron(row));
  }

  /** Deletes a cron and its firing records (its jobs stay). Throws NOT_FOUND. */
  async remove(cronId: string, tenant?: string): Promise<void> {
    if ((await this.q('delete_cron', [cronId, tenant ?? null])).rowCount !== 1) throw new LedgerError('NOT_FOUND', `No cron ${cronId}.`);
  }

  async firings(cronId: string, limit = 50): Promise<CronFiring[]> {
    return (await this.q('list_cron_firings', [cronId, limit])).rows.map((r) => ({
      cronId: r.cron_id,
      scheduledAt: r.scheduled_at,
      outcome: r.outcome,
      jobId: r.job_id ?? null,
      reason: r.reason ?? null,
      recordedAt: r.recorded_at,
    }));
  }

  /**
   * One firing pass: admits every due time of every due cron (up to `limit` crons) under the
   * missed-firing policy (`graceMs`: how late a time may be handled and still count as on
   * time), records each time, advances each cron. Each cron fires under its own savepoint: one
   * whose admission is refused records its times as `failed` with the reason, and the others
   * fire as if it did not exist. Returns the jobs admitted, for the caller to deliver (the
   * reconciler delivers any it cannot), and the crons that failed.
   */
  async fireDue(options: FireOptions): Promise<{ admitted: Job[]; failed: Array<{ cron: Cron; reason: string }> }> {
    return this.ledger.inTransaction(async (client) => {
      const due = (await this.q('lock_due_crons', [options.limit ?? 50], client)).rows;
      const admitted: Job[] = [];
      const failed: Array<{ cron: Cron; reason: string }> = [];
      for (const row of due) {
        const cron = toCron(row);
        const now = row.db_now as Date;
        await client.query('SAVEPOINT cron_firing');
        try {
          admitted.push(...(await this.fireOne(cron, now, options, client)));
          await client.query('RELEASE SAVEPOINT cron_firing');
        } catch (err) {
          if (err instanceof LedgerError && err.code === 'DATABASE_UNAVAILABLE') throw err;
          await client.query('ROLLBACK TO SAVEPOINT cron_firing');
          const reason = reasonOf(err);
          failed.push({ cron, reason });
          await this.recordFailure(cron, now, options.graceMs, reason, client);
        }
      }
      return { admitted, failed };
    });
  }

  /** Admits, records and advances one due cron; throws when an admission is refused (the caller rolls back to its savepoint). */
  private async fireOne(stored: Cron, now: Date, options: FireOptions, client: pg.PoolClient): Promise<Job[]> {
    const cron = this.opened(stored);
    const due = dueTimes(cron, now);
    const end = cron.endTime;
    // Times after the cron's end are not fired (nor recorded); its next time past the end is never due.
    const times = end ? due.times.filter((t) => t.getTime() <= end.getTime()) : due.times;
    const next = due.next;
    const firings: Firing[] = [];
    const admitted: Job[] = [];
    for (const d of decideFirings(times, now, options.graceMs, cron.missed)) {
      if (d.outcome === 'missed') {
        firings.push({ ...d, jobId: null, reason: null });
        continue;
      }
      const take = await options.charge?.(cron.tenant);
      if (take && !take.ok) {
        const reason = `rate_limited: the tenant was over its rate limit (RATE_LIMIT_PER_SECOND); this time was not admitted.`;
        firings.push({ at: d.at, outcome: 'failed', jobId: null, reason });
        continue;
      }
      const { job } = await this.ledger.admit(
        {
          tenant: cron.tenant,
          graph: cron.graph,
          input: cron.input,
          threadId: cron.threadId ?? (cron.assistantId ? await this.newApiThread(cron, client) : undefined),
          idempotencyKey: cronFiringKey(cron.cronId, d.at),
          metadata: { ...cron.metadata, cronId: cron.cronId, scheduledAt: d.at.toISOString() },
        },
        client,
      );
      firings.push({ ...d, jobId: job.jobId, reason: null });
      admitted.push(job);
    }
    await this.record(cron.cronId, firings, client);
    await this.q('advance_cron', [cron.cronId, next], client);
    return admitted;
  }

  /**
   * A new LangGraph API thread for one firing of a thread-less LangGraph API cron, tagged with its
   * graph and assistant as a run tags its thread; created in the firing's transaction (a refused
   * firing rolls it back with its savepoint).
   */
  private async newApiThread(cron: Cron, client: pg.PoolClient): Promise<string> {
    const threadId = randomUUID();
    await this.q('create_thread', [threadId, cron.tenant, json({ graph_id: cron.graph, assistant_id: cron.assistantId })], client);
    return threadId;
  }

  /**
   * Records a refused cron's due times as `failed` (missed ones stay `missed`) and advances it. A
   * schedule that no longer parses (a row written around the API) has no next time: its due
   * time is recorded as failed and the cron disabled, so it stops being due every pass.
   */
  private async recordFailure(cron: Cron, now: Date, graceMs: number, reason: string, client: pg.PoolClient): Promise<void> {
    let due: { times: Date[]; next: Date };
    try {
      due = dueTimes(cron, now);
    } catch (err) {
      const why = reasonOf(err);
      await this.record(cron.cronId, [{ at: cron.nextFireAt, outcome: 'failed', jobId: null, reason: `${why} The cron was disabled.` }], client);
      await this.q('update_cron', [cron.cronId, null, null, null, null, null, false, null, null, false, null], client);
      return;
    }
    const firings = decideFirings(due.times, now, graceMs, cron.missed).map(
      (d): Firing => (d.outcome === 'missed' ? { ...d, jobId: null, reason: null } : { at: d.at, outcome: 'failed', jobId: null, reason }),
    );
    await this.record(cron.cronId, firings, client);
    await this.q('advance_cron', [cron.cronId, due.next], client);
  }

  private async record(cronId: string, firings: readonly Firing[], client: pg.PoolClient): Promise<void> {
    const values = [cronId, firings.map((f) => f.at), firings.map((f) => f.outcome), firings.map((f) => f.jobId), firings.map((f) => f.reason)];
    await this.q('record_cron_firings', values, client);
  }
}

/** `<created_at µs>_<cron id>`, as list() hands it out. Throws INVALID_REQUEST for anything else. */
function splitCursor(cursor: string): [string, string] {
  const match = /^(\d{1,18})_(.+)$/.exec(cursor);
  if (!match) throw new LedgerError('INVALID_REQUEST', 'cursor must be a nextCursor value from an earlier page.');
  return [match[1] as string, match[2] as string];
}
