// The packages as a user gets them from npm's own packing: `npm pack -w @runledger/client` (its
// prepack builds it alone) installs alone (nothing of the server side) and imports with plain
// node; `npm run pack` (one build, then `npm pack --workspaces`) makes the rest; the example
// project (examples/booking-agent) is copied beside the tarballs into a fresh directory outside
// the repository, installed from them with npm, type-checked and compiled with tsc, and driven
// through its `node_modules/.bin/runledger` as a user would: `migrate`, `producer`, `worker`,
// `submit`, `jobs` (started in well under a second of CPU), then `dev` (on the test PostgreSQL)
// serves its langgraph.json, the backend service's job completes, and a worker SIGKILLed while
// the booking tool waits on its provider hands the run to the other worker, with the table booked once.
import { execFile, spawn, spawnSync } from 'node:child_process';
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
const started: Proc[] = [];
afterAll(async () => {
  for (const p of [...started, dev]) {
    if (p && p.child.exitCode === null) {
      p.child.kill('SIGKILL');
      await p.exited;
    }
  }
});

/** CPU time (user + system, GNU time) of one `runledger jobs`, in ms: what its start-up costs, whatever the machine's load. */
function jobsCpuMs(bin: string, cwd: string, env: NodeJS.ProcessEnv): number {
  const r = spawnSync('/usr/bin/time', ['-f', 'cpu %U %S', bin, 'jobs', '--limit', '5'], { cwd, env, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  const [, user, system] = /cpu (\S+) (\S+)/.exec(r.stderr) ?? [];
  return (Number(user) + Number(system)) * 1000;
}

/** The installed bin's commands one by one, as an operator runs them on their own servers. */
async function runOneByOne(bin: string, cwd: string, env: NodeJS.ProcessEnv): Promise<void> {
  const cli = (...args: string[]) => run(bin, args, { cwd, env });
  expect((await cli('migrate')).stdout).toMatch(/is up to date \([1-9]\d* migration\(s\) applied now\)/);
  const producer = keepOutput(spawn(bin, ['producer'], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] }));
  const worker = keepOutput(spawn(bin, ['worker'], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] }));
  started.push(producer, worker);
  await waitFor('the producer to be ready', async () => (await fetch(`http://127.0.0.1:${env.PORT}/readyz`).catch(() => undefined))?.ok, 60_000);
  const input = JSON.stringify({ messages: [{ role: 'user', content: 'Book a table for 2 at Chez Ada' }] });
  const { jobId } = JSON.parse((await cli('submit', 'agent', '--input', input, '--json')).stdout) as { jobId: string };
  const completed = async () => {
    const { jobs } = JSON.parse((await cli('jobs', '--json')).stdout) as { jobs: Array<{ jobId: string; status: string }> };
    return jobs.find((j) => j.jobId === jobId)?.status === 'completed';
  };
  await waitFor(`job ${jobId} to complete`, completed, 60_000);
  expect(readFileSync(path.join(cwd, 'bookings-cli.jsonl'), 'utf8').trim().split('\n')).toHaveLength(1);
  const cpu = [0, 1, 2].map(() => jobsCpuMs(bin, cwd, env)).sort((a, b) => a - b);
  console.log(`[pack] runledger jobs start-up, CPU ms: ${cpu.map((c) => c.toFixed(0)).join(', ')}`);
  expect(cpu[1]).toBeLessThan(1_000);
  for (const p of [producer, worker]) p.child.kill('SIGTERM');
  expect(await producer.exited, producer.output()).toBe(0);
  expect(await worker.exited, worker.output()).toBe(0);
}

it('installs the client alone, and the tarballs in a fresh project that type-checks and runs with plain node through a worker crash', {
  timeout: 600_000,
}, async () => {
  const t0 = Date.now();
  const lap = (what: string) => console.log(`[pack] ${what} after ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  // A service that only submits installs the client alone: no server-side package comes with it.
  const service = mkdtempSync(path.join(tmpdir(), 'runledger-client-'));
  await run('npm', ['pack', '-w', '@runledger/client', '--pack-destination', service], { cwd: root });
  await run('npm', ['init', '-y'], { cwd: service });
  await run('npm', ['install', '--no-audit', '--no-fund', path.join(service, 'runledger-client-0.1.0.tgz')], { cwd: service });
  expect(readdirSync(path.join(service, 'node_modules')).filter((d) => !d.startsWith('.'))).toEqual(['@runledger']);
  expect(readdirSync(path.join(service, 'node_modules/@runledger'))).toEqual(['client']);
  const imported = await run(process.execPath, ['--input-type=module', '-e', "console.log(typeof (await import('@runledger/client')).RunledgerClient)"], {
    cwd: service,
  });
  expect(imported.stdout.trim()).toBe('function');
  await run('npm', ['run', 'pack'], { cwd: root });
  lap('packed');

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
  const bin = path.join(project, 'node_modules/.bin/runledger');
  await runOneByOne(bin, project, {
    ...env,
    DB_SCHEMA: `${schema}_cli`,
    PORT: String(await freePort()),
    BOOKING_LATENCY_MS: '0',
    BOOKINGS_FILE: 'bookings-cli.jsonl',
  });
  lap('migrate, producer, worker, submit, jobs');

  dev = keepOutput(spawn(bin, ['dev'], { cwd: project, env, stdio: ['ignore', 'pipe', 'pipe'] }));
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
