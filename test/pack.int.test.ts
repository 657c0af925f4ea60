// The packages as a user gets them: `npm run pack` builds and packs every package; the client
// installs alone (nothing of the server side) and imports with plain node; the example
// project (examples/booking-agent) is copied beside the tarballs into a fresh directory outside
// the repository, installed from them with npm, type-checked and compiled with tsc, and run with
// plain node: `runledger dev` (on the test PostgreSQL) serves its langgraph.json, the backend
// service's job completes, and a worker SIGKILLed while the booking tool waits on its provider
// hands the run to the other worker, with the table booked once.
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, inject, it } from 'vitest';
import { createPool, freePort, Ledger } from '../packages/ledger/src/index';
import { waitFor } from './support/db';
import './support/provided';
import { keepOutput, type Proc } from './support/stack';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '..');

let dev: Proc | undefined;
afterAll(async () => {
  if (dev && dev.child.exitCode === null) {
    dev.child.kill('SIGKILL');
    await dev.exited;
  }
});

it('installs the client alone, and the tarballs in a fresh project that type-checks and runs with plain node through a worker crash', {
  timeout: 300_000,
}, async () => {
  const t0 = Date.now();
  const lap = (what: string) => console.log(`[pack] ${what} after ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  await run('npm', ['run', 'pack'], { cwd: root });
  lap('packed');

  // A service that only submits installs the client alone: no server-side package comes with it.
  const service = mkdtempSync(path.join(tmpdir(), 'runledger-client-'));
  await run('npm', ['init', '-y'], { cwd: service });
  await run('npm', ['install', '--no-audit', '--no-fund', path.join(root, '.pack/runledger-client-0.1.0.tgz')], { cwd: service });
  expect(readdirSync(path.join(service, 'node_modules')).filter((d) => !d.startsWith('.'))).toEqual(['@runledger']);
  expect(readdirSync(path.join(service, 'node_modules/@runledger'))).toEqual(['client']);
  const imported = await run(process.execPath, ['--input-type=module', '-e', "console.log(typeof (await import('@runledger/client')).RunledgerClient)"], {
    cwd: service,
  });
  expect(imported.stdout.trim()).toBe('function');

  // Same layout as the repository (the example's dependencies are file:../../.pack/*.tgz), elsewhere.
  const outside = mkdtempSync(path.join(tmpdir(), 'runledger-pack-'));
  const project = path.join(outside, 'examples/booking-agent');
  cpSync(path.join(root, '.pack'), path.join(outside, '.pack'), { recursive: true });
  cpSync(path.join(root, 'examples/booking-agent'), project, {
    recursive: true,
    filter: (src) => !/(node_modules|build|\.runledger|bookings\.jsonl)$/.test(src),
  });
  await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: project });
  lap('installed');
  await run(path.join(project, 'node_modules/.bin/tsc'), ['-p', '.'], { cwd: project });
  lap('type-checked');

  const databaseUrl = inject('databaseUrl');
  const schema = `t_pack_${randomBytes(3).toString('hex')}`;
  const port = await freePort();
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NO_COLOR: '1',
    DATABASE_URL: databaseUrl,
    DB_SCHEMA: schema,
    QUEUE_BACKEND: 'postgres',
    PORT: String(port),
    LEASE_TTL_MS: '2000',
    SWEEP_INTERVAL_MS: '250',
    BOOKING_LATENCY_MS: '5000',
  };
  const bin = path.join(project, 'node_modules/@runledger/cli/dist/main.mjs');
  dev = keepOutput(spawn(process.execPath, [bin, 'dev'], { cwd: project, env, stdio: ['ignore', 'pipe', 'pipe'] }));
  const running = dev;
  await waitFor('runledger dev to serve the project', async () => running.output().includes('Runledger is running your graphs'), 90_000);
  const workersUp = Date.now();
  expect(running.output()).toContain('langgraph.json: agent');
  lap('runledger dev up');
  // The dev supervisor restarts a worker that ran 10 s or more; a quicker death stops the stack.
  await new Promise((r) => setTimeout(r, Math.max(0, 10_500 - (Date.now() - workersUp))));

  const backend = keepOutput(
    spawn(process.execPath, ['build/service.js', 'Book a table for 3 at Chez Ada'], {
      cwd: project,
      env: { PATH: process.env.PATH, RUNLEDGER_URL: `http://127.0.0.1:${port}` },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  const jobId = (await waitFor('the service to submit', async () => /submitted (\S+)/.exec(backend.output())?.[1], 30_000)) as string;
  const bookings = path.join(project, 'bookings.jsonl');
  await waitFor('the provider to book', async () => existsSync(bookings), 60_000);

  const pool = createPool({ connectionString: databaseUrl, schema, max: 2 });
  const ledger = new Ledger(pool);
  try {
    // The provider booked and is slow to answer: kill the worker that runs the tool now.
    const owner = (await ledger.get(jobId)).leaseOwner ?? '';
    const pid = Number(owner.split('-').at(-1));
    expect(pid, `lease owner ${owner}`).toBeGreaterThan(0);
    process.kill(pid, 'SIGKILL');
    lap(`killed worker ${pid}`);

    expect(await backend.exited, backend.output()).toBe(0);
    expect(backend.output()).toMatch(/completed after 2 attempt\(s\): Done: table for 3 at Chez Ada, booking T-1/);
    lap('job completed');
    expect(readFileSync(bookings, 'utf8').trim().split('\n')).toHaveLength(1);
    const job = await ledger.get(jobId);
    expect(await ledger.effects(jobId)).toEqual([expect.objectContaining({ name: 'book_table', status: 'committed' })]);
    const types = (await ledger.events(jobId)).map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(['recovery_required', 'resumed', 'effect_retried', 'completed']));

    const state = await fetch(`http://127.0.0.1:${port}/v1/threads/${job.threadId}/state`);
    expect(state.status).toBe(200);
    expect(((await state.json()) as { values: { messages: unknown[] } }).values.messages).toHaveLength(4);
  } finally {
    await pool.end();
  }
  running.child.kill('SIGINT');
  expect(await running.exited, running.output()).toBe(0);
  lap('stopped');
  // Kept on failure for inspection, like the test schemas.
  rmSync(outside, { recursive: true, force: true });
  rmSync(service, { recursive: true, force: true });
});
