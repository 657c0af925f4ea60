// The chaos harness's short form as CI runs it: `chaos/run.ts --short --seed 1` as a real child
// process (its own PostgreSQL, Redis, producer and workers), judged by its exit code and JSON.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '..');

it('the short chaos run keeps every invariant of ARCHITECTURE.md, Invariants', { timeout: 290_000 }, async () => {
  const out = mkdtempSync(path.join(os.tmpdir(), 'chaos-test-'));
  const child = spawn(process.execPath, ['--conditions=@runledger/source', '--import', 'tsx', 'chaos/run.ts', '--short', '--seed', '1', '--out', out], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => {
    output += d;
  });
  child.stderr.on('data', (d) => {
    output += d;
  });
  // Past the budget the harness is told to stop; its exit handler kills its servers and processes.
  const budget = setTimeout(() => child.kill('SIGTERM'), 270_000);
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  clearTimeout(budget);
  if (code !== 0) console.log(output.slice(-8_000));
  expect(code).toBe(0);

  const result = JSON.parse(readFileSync(path.join(out, '1.json'), 'utf8'));
  expect(result.violations).toEqual([]);
  expect(result.audit.jobs.accepted).toBeGreaterThanOrEqual(100);
  expect(result.audit.lost.count).toBe(0);
  expect(result.audit.effects.duplicateEffects).toBe(0);
  expect(result.staleWrites.applied).toBe(0);
  expect(result.staleWrites.rejected).toBeGreaterThan(0);
  expect(result.leaseAfterLastFault.longestMs).toBeLessThanOrEqual(result.leaseAfterLastFault.boundMs + result.leaseAfterLastFault.marginMs);
});
