// `npm start` on a machine with nothing configured: no DATABASE_URL, no REDIS_URL. It must
// start an embedded PostgreSQL, the producer and two workers, run the demo job to completed,
// and after one SIGINT leave no process behind (children, postmaster and its backends).
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '@runledger/ledger';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../../test/support/db';
import { spawnProcess } from '../../../test/support/stack';
import { processesUsing } from './processes';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('npm start', () => {
  it('runs the demo job to completed, then stops everything on SIGINT', { timeout: 240_000 }, async () => {
    const home = mkdtempSync(path.join(tmpdir(), 'runledger-start-'));
    chmodSync(home, 0o755); // as root, PostgreSQL runs as the postgres user, which must reach its data dir
    const port = await freePort();
    const env: NodeJS.ProcessEnv = { ...process.env, RUNLEDGER_HOME: home, PORT: String(port), NO_COLOR: '1' };
    for (const name of ['DATABASE_URL', 'REDIS_URL', 'QUEUE_BACKEND', 'DB_SCHEMA', 'QUEUE_PREFIX', 'RUNLEDGER_API_KEYS', 'RUNLEDGER_ADMIN_KEY'])
      delete env[name];

    const start = spawnProcess('apps/cli/src/start.ts', env);
    const t0 = Date.now();
    await waitFor('the demo job to complete', async () => start.output().includes('Demo job completed') || start.child.exitCode !== null, 150_000, 200);
    const out = start.output();
    expect(out, out).toContain('Demo job completed');
    // The timeline ends with the job's own `completed` event, printed before the summary line.
    expect(out).toMatch(/\+\d+\.\ds\s+completed\n\s+Demo job completed/);
    console.log(`[npm start] demo completed ${((Date.now() - t0) / 1000).toFixed(1)} s after launch`);
    expect(out).toMatch(/✓ database\s+embedded PostgreSQL on port \d+/);
    expect(out).toContain('BullMQ on PostgreSQL');
    // README's sample is a first run's output.
    const readmeLine = (start: string) =>
      readFileSync(path.join(import.meta.dirname, '../../../README.md'), 'utf8')
        .split('\n')
        .find((l) => l.includes(start));
    expect(out).toContain(readmeLine('✓ schema'));
    expect(out).toContain(readmeLine('✓ queue'));
    expect(out).toContain(`Bull Board   http://127.0.0.1:${port}/admin/queues`);
    expect(out).toContain(`Playground   http://127.0.0.1:${port}/playground`);
    // The banner lists what the producer serves and says that nothing checks keys, and how to change that.
    await waitFor('the banner', async () => start.output().includes('Ctrl-C stops everything'), 30_000, 200);
    const banner = start.output();
    expect(banner).toMatch(/ {2}Graphs {7}echo, vacation, approval\b/);
    expect(banner).toContain(`Auth         off: anyone who reaches http://127.0.0.1:${port} may submit jobs and open /admin.`);
    expect(banner).toContain('Turn it on: RUNLEDGER_API_KEYS=tenant:key (API) and RUNLEDGER_ADMIN_KEY=key (/admin, /metrics).');

    // What the demo printed is what the API holds: one vacation job, completed, three bookings.
    const jobId = /job ([0-9a-f-]{36}) submitted/.exec(out)?.[1];
    const job = (await (await fetch(`http://127.0.0.1:${port}/v1/jobs/${jobId}`)).json()) as { effects: Array<{ status: string }> };
    expect(job).toMatchObject({ graph: 'vacation', status: 'completed' });
    expect(job.effects.map((e) => e.status)).toEqual(['committed', 'committed', 'committed']);

    const childPids = [
      Number(/producer\s+\S+ \(pid (\d+)\)/.exec(out)?.[1]),
      ...(/workers\s+2 running \(pids (\d+), (\d+);/.exec(out)?.slice(1).map(Number) ?? []),
      Number(readFileSync(path.join(home, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]),
    ];
    expect(childPids).toHaveLength(4);
    expect(childPids.every(alive)).toBe(true);
    expect(processesUsing(home).length).toBeGreaterThanOrEqual(2); // embedded host and postmaster at least

    start.kill('SIGINT');
    const code = await Promise.race([start.exited, new Promise((r) => setTimeout(() => r('timeout'), 60_000))]);
    expect(code, start.output()).toBe(0);
    expect(start.output()).toContain('Stopped.');
    expect(childPids.filter(alive)).toEqual([]);
    expect(processesUsing(home)).toEqual([]);
    rmSync(home, { recursive: true, force: true }); // kept when the test fails, for inspection
  });
});
