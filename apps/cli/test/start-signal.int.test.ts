// Process managers, IDE run buttons and container stops signal only the main pid of `npm start`
// (npm), not its whole process group. The supervisor below it must stop everything it started
// (producer, workers, embedded PostgreSQL) as a Ctrl-C does: on npm's SIGTERM or SIGINT, and when
// npm dies without a word (SIGKILL).
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '@runledger/ledger';
import { afterAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../test/support/db';
import { keepOutput } from '../../../test/support/stack';
import { processesUsing } from './processes';

const root = path.resolve(import.meta.dirname, '../../..');
const home = mkdtempSync(path.join(tmpdir(), 'runledger-signal-'));
chmodSync(home, 0o755); // as root, PostgreSQL runs as the postgres user, which must reach its data dir

const killLeftovers = () => {
  for (const p of processesUsing(home)) process.kill(Number(p.split(' ')[0]), 'SIGKILL');
};

describe('npm start, signalled on its main pid alone', () => {
  let passed = 0;
  afterAll(() => {
    killLeftovers();
    if (passed === 3) rmSync(home, { recursive: true, force: true }); // kept when a case fails, for inspection
  });

  it.each(['SIGTERM', 'SIGINT', 'SIGKILL'] as const)('%s to npm leaves no process behind', { timeout: 240_000 }, async (signal) => {
    const port = await freePort();
    const env: NodeJS.ProcessEnv = { ...process.env, RUNLEDGER_HOME: home, PORT: String(port), NO_COLOR: '1' };
    for (const name of ['DATABASE_URL', 'REDIS_URL', 'QUEUE_BACKEND', 'DB_SCHEMA', 'QUEUE_PREFIX', 'RUNLEDGER_API_KEYS', 'RUNLEDGER_ADMIN_KEY'])
      delete env[name];
    // Its own process group, as a process manager starts it: only `npm.pid` gets the signal.
    const npm = keepOutput(spawn('npm', ['start'], { cwd: root, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] }));
    try {
      await waitFor('the stack to run', async () => npm.output().includes('Runledger is running.') || npm.child.exitCode !== null, 150_000, 200);
      expect(npm.output()).toContain('Runledger is running.');
      expect(processesUsing(home).length).toBeGreaterThanOrEqual(6); // npm, supervisor, embedded host, postmaster, producer, workers
      process.kill(npm.child.pid!, signal);
      await npm.exited;
      const left = await waitFor('every process to stop', async () => processesUsing(home).length === 0, 60_000, 250).catch(() => processesUsing(home));
      expect(left, `${npm.output()}\nstill running:\n${processesUsing(home).join('\n')}`).toBe(true);
      passed++;
    } finally {
      killLeftovers();
    }
  });
});
