// As root, `npm start` in a checkout the `postgres` user cannot enter runs PostgreSQL from a
// copy outside the checkout. That copy once linked into the clone that made it, so the next
// clone failed after the first was deleted. Here: clone A (0700) makes the copy and is deleted,
// then `npm start` in clone B (0700) must run the demo job to completed from that copy.
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '@runledger/ledger';
import { afterAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../test/support/db';
import { keepOutput } from '../../../test/support/stack';

const repo = path.resolve(import.meta.dirname, '../../..');

/** A 0700 directory holding this checkout's files (as they are now) and its node_modules (hard links where the file system allows). */
function cloneOfThisCheckout(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'runledger-clone-'));
  chmodSync(dir, 0o700);
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: repo, encoding: 'utf8' })
    .split('\0')
    .filter(Boolean);
  for (const file of files) {
    if (!existsSync(path.join(repo, file))) continue; // deleted in the work tree
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    copyFileSync(path.join(repo, file), path.join(dir, file));
  }
  try {
    execFileSync('cp', ['-al', path.join(repo, 'node_modules'), path.join(dir, 'node_modules')]);
  } catch {
    rmSync(path.join(dir, 'node_modules'), { recursive: true, force: true });
    execFileSync('cp', ['-a', path.join(repo, 'node_modules'), path.join(dir, 'node_modules')]);
  }
  return dir;
}

/** Runs `node --conditions=@runledger/source --import tsx <args>` in `cwd`, its output kept. */
const run = (cwd: string, args: string[], env: NodeJS.ProcessEnv) =>
  keepOutput(spawn(process.execPath, ['--conditions=@runledger/source', '--import', 'tsx', ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] }));

describe.runIf(process.getuid?.() === 0)('npm start in a second clone, after the first clone is deleted (root)', () => {
  const scratch: string[] = [];
  afterAll(() => {
    for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
  });

  it('runs the demo from the copy the first clone made', { timeout: 300_000 }, async () => {
    const copyRoot = mkdtempSync(path.join(tmpdir(), 'runledger-copyroot-'));
    chmodSync(copyRoot, 0o755);
    scratch.push(copyRoot);
    const env: NodeJS.ProcessEnv = { ...process.env, RUNLEDGER_EMBEDDED_COPY_DIR: copyRoot, NO_COLOR: '1' };
    for (const name of ['DATABASE_URL', 'REDIS_URL', 'QUEUE_BACKEND', 'DB_SCHEMA', 'QUEUE_PREFIX', 'RUNLEDGER_HOME']) delete env[name];

    // Clone A starts (and stops) the embedded server once: that makes the copy.
    const cloneA = cloneOfThisCheckout();
    scratch.push(cloneA);
    const script = `const { startEmbeddedPostgres } = await import('./packages/ledger/src/embedded.ts');
      const db = await startEmbeddedPostgres({ dir: '.runledger/pg', copyRoot: process.env.RUNLEDGER_EMBEDDED_COPY_DIR, log: console.log });
      await db.stop();`;
    const a = run(cloneA, ['--input-type=module', '-e', script], env);
    expect(await a.exited, a.output()).toBe(0);
    expect(a.output()).toContain(`runs its binaries from ${copyRoot}`);
    rmSync(cloneA, { recursive: true, force: true });
    expect(readdirSync(copyRoot).filter((n) => n.startsWith('runledger-embedded-postgres-'))).toHaveLength(1);

    // Clone B: `npm start` from the same copy, demo to completed.
    const cloneB = cloneOfThisCheckout();
    scratch.push(cloneB);
    const port = await freePort();
    const b = run(cloneB, ['apps/cli/src/start.ts'], { ...env, PORT: String(port) });
    try {
      await waitFor('the demo job in clone B', async () => b.output().includes('Demo job completed') || b.child.exitCode !== null, 200_000, 250);
      expect(b.output(), b.output()).toContain('Demo job completed');
      const serverLog = readFileSync(path.join(cloneB, '.runledger', 'logs', 'postgres.log'), 'utf8');
      expect(serverLog).toContain(`runs its binaries from ${copyRoot}`);
      expect(serverLog).not.toContain('rebuilt the copy'); // the copy from the deleted clone was whole
    } finally {
      b.child.kill('SIGINT');
      await Promise.race([b.exited, new Promise((r) => setTimeout(r, 60_000))]);
    }
    expect(b.output()).toContain('Stopped.');
  });
});
