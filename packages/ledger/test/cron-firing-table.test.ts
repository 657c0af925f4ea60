// The cron firing decision as a table (decideFirings, the policy written as data): which of a
// pass's scheduled times are admitted on time, which one `run-once` admits late, which are
// recorded as missed. Times are minutes before `now`; the grace is CRON_MISFIRE_GRACE_MS.
import { describe, expect, it } from 'vitest';
import { type CronOutcome, decideFirings, type MissedPolicy } from '../src/cron-schedule';

const now = new Date('2026-12-04T03:00:00Z');
const minutesAgo = (m: number) => new Date(now.getTime() - m * 60_000);
const GRACE_MS = 60_000;

const rows: Array<[string, number[], MissedPolicy, CronOutcome[]]> = [
  ['one time, on time → admitted', [0], 'run-once', ['admitted']],
  ['one time within the grace → admitted', [1], 'skip', ['admitted']],
  ['one time past the grace, run-once → caught_up', [5], 'run-once', ['caught_up']],
  ['one time past the grace, skip → missed', [5], 'skip', ['missed']],
  ['an outage of three times, run-once → the latest caught up, the others missed', [30, 20, 10], 'run-once', ['missed', 'missed', 'caught_up']],
  ['an outage of three times, skip → all missed', [30, 20, 10], 'skip', ['missed', 'missed', 'missed']],
  [
    'late times then one on time, run-once → the latest late one caught up, the on-time one admitted',
    [30, 10, 0],
    'run-once',
    ['missed', 'caught_up', 'admitted'],
  ],
  ['late times then one on time, skip → the on-time one alone admitted', [30, 10, 0], 'skip', ['missed', 'missed', 'admitted']],
  ['no times → nothing', [], 'run-once', []],
];

describe('cron firing decision, row by row', () => {
  it.each(rows)('%s', (_row, minutes, policy, outcomes) => {
    const times = minutes.map(minutesAgo);
    expect(decideFirings(times, now, GRACE_MS, policy)).toEqual(times.map((at, i) => ({ at, outcome: outcomes[i] })));
  });
});
