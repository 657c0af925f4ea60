// One statement runner, one fence check: the ledger runs its statements through sql.ts's run() and
// inTransaction() (where a lost connection becomes DATABASE_UNAVAILABLE and the prepared-statement
// rule applies), and turns a refused fenced write into LeaseLostError only in errors.ts's fenced().
// A second copy of either rule, added anywhere in packages/ledger/src, fails here.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';

const dir = join(import.meta.dirname, '../src');
const sources = readdirSync(dir, { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.ts'))
  .map((f) => ({ file: f, text: readFileSync(join(dir, f), 'utf8') }));
const filesWith = (pattern: RegExp) => sources.filter((s) => pattern.test(s.text)).map((s) => s.file);

it('builds LeaseLostError in one place, fenced()', () => {
  expect(filesWith(/new LeaseLostError\(/)).toEqual(['errors.ts']);
  const errors = sources.find((s) => s.file === 'errors.ts')?.text ?? '';
  expect(errors.match(/new LeaseLostError\(/g)).toHaveLength(1);
});

it('maps database errors only in the statement runner', () => {
  expect(filesWith(/wrapDbError\(err\)/).sort()).toEqual(['sql.ts']);
});

it('runs named statements only through run(), except the migration runner', () => {
  expect(filesWith(/\.query\(sql\(/).sort()).toEqual(['migrate.ts']);
});
