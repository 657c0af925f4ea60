import { randomUUID } from 'node:crypto';
import { CronExpressionParser } from 'cron-parser';
import type pg from 'pg';
import { type Queryable, wrapDbError } from './db';
import { LedgerError } from './errors';
import type { Ledger } from './ledger';
import { json } from './ledger-core';
import { sql } from './sql';
import type { Job } from './types';

/** After an outage: admit the latest missed time once (`run-once`), or none (`skip`); the others are recorded as missed. */
export type MissedPolicy = 'run-once' | 'skip';
export const MISSED_POLICIES: readonly MissedPolicy[] = ['run-once', 'skip'];

/** A cron definition as stored (`crons` row). */
export interface Cron {
  cronId: string;
  tenant: string;
  graph: string;
  schedule: string;
  timezone: string;
  input: unknown;
  /** null: each firing starts a new thread; else each firing is a turn of this thread. */
  threadId: string | null;
  metadata: Record<string, unknown>;
  missed: MissedPolicy;
  enabled: boolean;
  nextFireAt: Date;
  createdAt: Date;
  updatedAt: Date;
  /** The latest handled scheduled time and what became of it (list only). */
  lastScheduledAt?: Date | null;
  lastOutcome?: CronOutcome | null;
}

/** What became of one scheduled time: admitted on time, admitted late by `run-once`, or not run. */
export type CronOutcome = 'admitted' | 'caught_up' | 'missed';

export interface CronFiring {
  cronId: string;
  scheduledAt: Date;
  outcome: CronOutcome;
  jobId: string | null;
  recordedAt: Date;
}

export interface NewCron {
  tenant?: string;
  graph: string;
  schedule: string;
  /** IANA time zone the schedule is read in. Default UTC. */
  timezone?: string;
  input: unknown;
  threadId?: string | null;
  metadata?: Record<string, unknown>;
  missed?: MissedPolicy;
  enabled?: boolean;
}

export type CronPatch = Partial<Pick<NewCron, 'schedule' | 'timezone' | 'input' | 'missed' | 'enabled'>>;

/** Most scheduled times one firing pass handles per cron; the next pass goes on from there. */
const MAX_TIMES_PER_PASS = 1_000;

/**
 * The first scheduled time of `schedule` (5 or 6 fields, cron-parser's syntax) in `timezone`
 * strictly after `after`. Throws LedgerError INVALID_REQUEST for an expression or time zone
 * cron-parser refuses, naming it.
 */
export function nextCronTime(schedule: string, timezone: string, after: Date): Date {
  checkTimezone(timezone);
  try {
    return CronExpressionParser.parse(schedule, { currentDate: after, tz: timezone }).next().toDate();
  } catch (err) {
    throw new LedgerError('INVALID_REQUEST', `"${schedule}" is not a valid cron expression: ${(err as Error).message}.`, { cause: err });
  }
}

function checkTimezone(timezone: string): void {
  try {
    new Intl.DateTimeFormat('en', { timeZone: timezone });
  } catch {
    throw new LedgerError('INVALID_REQUEST', `"${timezone}" is not an IANA time zone (e.g. UTC, Europe/Paris).`);
  }
}

function toCron(r: Record<string, unknown>): Cron {
  return {
    cronId: r.cron_id as string,
    tenant: r.tenant as string,
    graph: r.graph as string,
    schedule: r.schedule as string,
    timezone: r.timezone as string,
    input: r.input ?? null,
    threadId: (r.thread_id as string | null) ?? null,
    metadata: (r.metadata as Record<string, unknown>) ?? {},
    missed: r.missed as MissedPolicy,
    enabled: r.enabled as boolean,
    nextFireAt: r.next_fire_at as Date,
    createdAt: r.created_at as Date,
    updatedAt: r.updated_at as Date,
    ...('last_outcome' in r
      ? { lastScheduledAt: (r.last_scheduled_at as Date | null) ?? null, lastOutcome: (r.last_outcome as CronOutcome | null) ?? null }
      : {}),
  };
}

/** The scheduled times from `first` up to `now`, at most MAX_TIMES_PER_PASS, and the next one after them. */
function dueTimes(cron: Cron, now: Date): { times: Date[]; next: Date } {
  const times: Date[] = [];
  let t = cron.nextFireAt;
  while (t.getTime() <= now.getTime() && times.length < MAX_TIMES_PER_PASS) {
    times.push(t);
    t = nextCronTime(cron.schedule, cron.timezone, t);
  }
  return { times, next: t };
}

/** What one firing pass decided for one scheduled time. */
interface Decision {
  at: Date;
  outcome: CronOutcome;
}

/**
 * The policy, as data: times within `graceMs` of `now` are admitted; older ones were missed
 * (every producer was down), and `run-once` admits the latest of those once, as `caught_up`.
 */
export function decideFirings(times: readonly Date[], now: Date, graceMs: number, policy: MissedPolicy): Decision[] {
  const late = times.filter((t) => now.getTime() - t.getTime() > graceMs);
  const catchUp = policy === 'run-once' ? late[late.length - 1] : undefined;
  return times.map((at) => ({ at, outcome: !late.includes(at) ? 'admitted' : at === catchUp ? 'caught_up' : 'missed' }));
}

/** The idempotency key of a cron's firing at `at`: the same for every producer, so a time is admitted once. */
export function cronFiringKey(cronId: string, at: Date): string {
  return `cron:${cronId}:${at.toISOString()}`;
}

/**
 * Crons in PostgreSQL: definitions, and `fireDue`, which every producer calls on a timer. Each
 * due cron is locked (SKIP LOCKED), its due times are admitted through the ledger with the key
 * `cron:<id>:<scheduled time>` and recorded in `cron_firings`, and its next time advanced, all
 * in one transaction: two producers, a restart or a lost queue never fire a time twice, and
 * every time ends up recorded (admitted, caught up or missed).
 */
export class Crons {
  constructor(private readonly ledger: Ledger) {}

  private async q(name: string, values: unknown[], db: Queryable = this.ledger.pool): Promise<pg.QueryResult> {
    try {
      return await db.query(sql(name), values);
    } catch (err) {
      throw wrapDbError(err);
    }
  }

  /** Stores a cron; its first firing is the first scheduled time after now. Throws INVALID_REQUEST for a bad schedule or time zone. */
  async create(def: NewCron): Promise<Cron> {
    const timezone = def.timezone ?? 'UTC';
    const next = nextCronTime(def.schedule, timezone, new Date());
    const values = [
      randomUUID(),
      def.tenant ?? 'default',
      def.graph,
      def.schedule,
      timezone,
      json(def.input ?? null),
      def.threadId ?? null,
      json(def.metadata ?? {}),
      def.missed ?? 'run-once',
      def.enabled ?? true,
      next,
    ];
    return toCron((await this.q('insert_cron', values)).rows[0]);
  }

  async list(tenant?: string): Promise<Cron[]> {
    return (await this.q('list_crons', [tenant ?? null])).rows.map(toCron);
  }

  /** Throws LedgerError NOT_FOUND when there is no such cron for `tenant`. */
  async get(cronId: string, tenant?: string): Promise<Cron> {
    const row = (await this.q('get_cron', [cronId, tenant ?? null])).rows[0];
    if (!row) throw new LedgerError('NOT_FOUND', `No cron ${cronId}.`);
    return toCron(row);
  }

  /**
   * Changes a cron. A new schedule or time zone, or enabling a disabled cron, restarts it from
   * now: times passed while it was off are neither fired nor recorded (it was off on purpose).
   */
  async update(cronId: string, patch: CronPatch, tenant?: string): Promise<Cron> {
    const current = await this.get(cronId, tenant);
    const schedule = patch.schedule ?? current.schedule;
    const timezone = patch.timezone ?? current.timezone;
    const restart = patch.schedule !== undefined || patch.timezone !== undefined || (patch.enabled === true && !current.enabled);
    const next = restart ? nextCronTime(schedule, timezone, new Date()) : null;
    const values = [
      cronId,
      tenant ?? null,
      patch.schedule ?? null,
      patch.timezone ?? null,
      patch.input === undefined ? null : json(patch.input),
      patch.missed ?? null,
      patch.enabled ?? null,
      next,
    ];
    const row = (await this.q('update_cron', values)).rows[0];
    if (!row) throw new LedgerError('NOT_FOUND', `No cron ${cronId}.`);
    return toCron(row);
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
      recordedAt: r.recorded_at,
    }));
  }

  /**
   * One firing pass: admits every due time of every due cron (up to `limit` crons) under the
   * missed-firing policy (`graceMs`: how late a time may be handled and still count as on
   * time), records each time, advances each cron. Returns the jobs admitted, for the caller to
   * deliver (the reconciler delivers any it cannot).
   */
  async fireDue(options: { graceMs: number; limit?: number }): Promise<Job[]> {
    return this.ledger.inTransaction(async (client) => {
      const due = (await this.q('lock_due_crons', [options.limit ?? 50], client)).rows;
      const admitted: Job[] = [];
      for (const row of due) {
        const cron = toCron(row);
        const now = row.db_now as Date;
        const { times, next } = dueTimes(cron, now);
        const decisions = decideFirings(times, now, options.graceMs, cron.missed);
        const jobIds: Array<string | null> = [];
        for (const d of decisions) {
          if (d.outcome === 'missed') {
            jobIds.push(null);
            continue;
          }
          const { job } = await this.ledger.admit(
            {
              tenant: cron.tenant,
              graph: cron.graph,
              input: cron.input,
              threadId: cron.threadId ?? undefined,
              idempotencyKey: cronFiringKey(cron.cronId, d.at),
              metadata: { ...cron.metadata, cronId: cron.cronId, scheduledAt: d.at.toISOString() },
            },
            client,
          );
          jobIds.push(job.jobId);
          admitted.push(job);
        }
        await this.q('record_cron_firings', [cron.cronId, times, decisions.map((d) => d.outcome), jobIds], client);
        await this.q('advance_cron', [cron.cronId, next], client);
      }
      return admitted;
    });
  }
}
