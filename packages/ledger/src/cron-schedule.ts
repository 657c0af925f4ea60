import { CronExpressionParser } from 'cron-parser';
import { LedgerError } from './errors';

/** After an outage: admit the latest missed time once (`run-once`), or none (`skip`); the others are recorded as missed. */
export type MissedPolicy = 'run-once' | 'skip';
export const MISSED_POLICIES: readonly MissedPolicy[] = ['run-once', 'skip'];

/** What became of one scheduled time: admitted on time, admitted late by `run-once`, not run, or refused by admission (with a reason). */
export type CronOutcome = 'admitted' | 'caught_up' | 'missed' | 'failed';

/** Scheduled times `shortestCronInterval` looks at: enough to meet every gap of a cron expression's fields. */
const INTERVAL_SAMPLE = 200;

function checkTimezone(timezone: string): void {
  try {
    new Intl.DateTimeFormat('en', { timeZone: timezone });
  } catch {
    throw new LedgerError('INVALID_REQUEST', `"${timezone}" is not an IANA time zone (e.g. UTC, Europe/Paris).`);
  }
}

function parse(schedule: string, timezone: string, after: Date) {
  checkTimezone(timezone);
  try {
    return CronExpressionParser.parse(schedule, { currentDate: after, tz: timezone });
  } catch (err) {
    throw new LedgerError('INVALID_REQUEST', `"${schedule}" is not a valid cron expression: ${(err as Error).message}.`, { cause: err });
  }
}

/**
 * The first scheduled time of `schedule` (5 or 6 fields, cron-parser's syntax) in `timezone`
 * strictly after `after`. Throws LedgerError INVALID_REQUEST for an expression or time zone
 * cron-parser refuses, naming it.
 */
export function nextCronTime(schedule: string, timezone: string, after: Date): Date {
  return parse(schedule, timezone, after).next().toDate();
}

/**
 * The shortest gap, in ms, between consecutive scheduled times of `schedule` among its next
 * INTERVAL_SAMPLE times after `after` (a minute-level list such as `0,1 * * * *` shows its 60 s
 * gap within them). Throws like nextCronTime.
 */
export function shortestCronInterval(schedule: string, timezone: string, after: Date): number {
  const times = parse(schedule, timezone, after)
    .take(INTERVAL_SAMPLE)
    .map((t) => t.getTime());
  let shortest = Number.POSITIVE_INFINITY;
  for (let i = 1; i < times.length; i++) shortest = Math.min(shortest, (times[i] as number) - (times[i - 1] as number));
  return shortest;
}

/** Most scheduled times one firing pass handles per cron; the next pass goes on from there. */
const MAX_TIMES_PER_PASS = 1_000;

/** The scheduled times from `first` up to `now`, at most MAX_TIMES_PER_PASS, and the next one after them. */
export function dueTimes(cron: { nextFireAt: Date; schedule: string; timezone: string }, now: Date): { times: Date[]; next: Date } {
  const times: Date[] = [];
  let t = cron.nextFireAt;
  while (t.getTime() <= now.getTime() && times.length < MAX_TIMES_PER_PASS) {
    times.push(t);
    t = nextCronTime(cron.schedule, cron.timezone, t);
  }
  return { times, next: t };
}

/** What one firing pass decided for one scheduled time. */
export interface Decision {
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
