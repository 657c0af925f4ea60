// Every statement a lease holder writes with carries the whole fence (ARCHITECTURE.md, Fencing):
// its token, a status of a held lease and an unexpired lease by the database clock. A statement is
// a lease holder's when its header takes a fencing token as a parameter or says it is fenced.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const dir = join(import.meta.dirname, '../src/sql');
const files = readdirSync(dir).filter((f) => f.endsWith('.sql'));
const header = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.startsWith('--'))
    .join('\n');
const body = (text: string) =>
  text
    .split('\n')
    .filter((l) => !l.trimStart().startsWith('--'))
    .join('\n');

/** True when the header says a lease holder runs it: a fencing-token parameter, or "Fenced" / "Fence:". */
const leaseHolders = files.filter((f) => {
  const h = header(readFileSync(join(dir, f), 'utf8'));
  return /\$\d+ fencing[ _]tokens?\b/i.test(h) || /^-- (Fenced\b|Fence:)/m.test(h);
});

const PARTS: Array<[string, RegExp]> = [
  ['the token', /fencing_token = (\$\d+|[a-z_]+\.[a-z_]+)/],
  ['a held status', /status IN \('starting', 'running'\)|status = 'running'/],
  ['an unexpired lease', /lease_expires_at > clock_timestamp\(\)/],
];

describe('the fence of every lease-holder statement', () => {
  it('finds the statements a lease holder writes with', () => {
    for (const known of [
      'append_event.sql',
      'end_attempt.sql',
      'heartbeat.sql',
      'put_checkpoint.sql',
      'put_checkpoint_running.sql',
      'put_writes.sql',
      'settle_effect.sql',
      'store_put.sql',
    ])
      expect(leaseHolders).toContain(known);
  });

  it.each(leaseHolders)('%s checks the token, a held status and an unexpired lease', (f) => {
    const sql = body(readFileSync(join(dir, f), 'utf8'));
    const missing = PARTS.filter(([, re]) => !re.test(sql)).map(([name]) => name);
    expect(missing).toEqual([]);
  });
});
