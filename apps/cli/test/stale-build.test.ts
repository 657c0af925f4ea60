// `npx runledger` in the repository runs the build; a source edited after it is named on stderr.
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { staleBuildWarning } from '../src/stale-build';

const root = mkdtempSync(path.join(tmpdir(), 'runledger-stale-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Writes `file` under the fake repository with its modification time `secondsAgo` in the past. */
function write(file: string, secondsAgo: number): string {
  const full = path.join(root, file);
  mkdirSync(path.dirname(full), { recursive: true });
  writeFileSync(full, '');
  const at = new Date(Date.now() - secondsAgo * 1000);
  utimesSync(full, at, at);
  return full;
}

it('names the package whose source changed after the build, and nothing while the build is current', () => {
  write('apps/cli/src/main.ts', 60);
  write('packages/ledger/src/sql/claim.sql', 60);
  const entry = write('apps/cli/dist/main.mjs', 30);
  expect(staleBuildWarning(entry)).toBeUndefined();
  write('packages/ledger/src/sql/claim.sql', 0);
  expect(staleBuildWarning(entry)).toBe(
    'runledger: packages/ledger/src changed after this build (apps/cli/dist/main.mjs); run `npm run build` to run the current sources.',
  );
});

it('checks nothing when the CLI runs from its sources or installed (no src/ beside dist/)', () => {
  expect(staleBuildWarning(path.join(root, 'apps/cli/src/main.ts'))).toBeUndefined();
  expect(staleBuildWarning(write('node_modules/@runledger/cli/dist/main.mjs', 90))).toBeUndefined();
});
