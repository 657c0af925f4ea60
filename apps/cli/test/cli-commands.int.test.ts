// The `runledger` CLI as a real process against a real migrated schema, with no worker running:
// admission, listing, inspection, operator actions, a reconciler sweep, migrate, and every
// failure as one readable line with a non-zero exit.
import { randomBytes, randomUUID } from 'node:crypto';
import { freePort, isFullySealed, listMigrations, readStoredPayloads } from '@runledger/ledger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDb, testDb } from '../../../test/support/db';
import { cliEnv, errorLine, runCli } from './cli-process';

// Each test runs the CLI several times; a process start costs seconds on a loaded 2-core machine.
describe('runledger CLI without workers', { timeout: 120_000 }, () => {
  let db: TestDb;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    db = await testDb('cli_commands');
    env = cliEnv({ DATABASE_URL: db.url, DB_SCHEMA: db.schema, QUEUE_BACKEND: 'postgres' });
  });
  afterAll(async () => {
    await db?.close();
  });

  /** A job in manual_reconcile, as a worker leaves it when an effect's outcome is unknown. */
  async function parkedForAPerson(): Promise<string> {
    const { job } = await db.ledger.admit({ graph: 'echo', input: {} });
    const claim = await db.ledger.claim(job.jobId, 'test-worker');
    if (!claim.ok) throw new Error(`claim refused: ${claim.reason}`);
    await db.ledger.requireManual(job.jobId, claim.job.fencingToken, 'effect_in_doubt');
    return job.jobId;
  }

  it('migrate applies every migration to a new schema, then nothing', async () => {
    const schema = `t_cli_migrate_${randomBytes(3).toString('hex')}`;
    const migrateEnv = { ...env, DB_SCHEMA: schema };
    const first = await runCli(['migrate'], migrateEnv);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain(`schema ${schema} is up to date (${listMigrations().length} migration(s) applied now)`);
    const again = await runCli(['migrate'], migrateEnv);
    expect(again.stdout).toContain('(0 migration(s) applied now)');
  });

  it('submit admits and queues a job; the same key returns the same job', async () => {
    const args = ['submit', 'echo', '--input', '{"steps":2}', '--key', `k-${randomUUID()}`, '--json'];
    const run = await runCli(args, env);
    expect(run.code, run.stderr).toBe(0);
    const first = JSON.parse(run.stdout);
    expect(first).toMatchObject({ status: 'accepted', created: true, enqueued: true });
    const job = await db.ledger.get(first.jobId);
    expect(job).toMatchObject({ graph: 'echo', input: { steps: 2 }, deliveries: 1 });

    const second = JSON.parse((await runCli(args, env)).stdout);
    expect(second).toMatchObject({ jobId: first.jobId, created: false });
  });

  it('submit refuses bad JSON, an unknown graph and an input the graph rejects', async () => {
    const badJson = await runCli(['submit', 'echo', '--input', '{steps:'], env);
    expect(badJson.code).toBe(2);
    expect(errorLine(badJson)).toMatch(/^runledger: --input is not valid JSON/);

    const unknown = await runCli(['submit', 'nope'], env);
    expect(unknown.code).toBe(2);
    expect(errorLine(unknown)).toContain('Unknown graph "nope"; known graphs: echo, vacation, approval');

    const rejected = await runCli(['submit', 'approval', '--input', '{}'], env);
    expect(rejected.code).toBe(2);
    expect(errorLine(rejected)).toContain('Bad --input for approval');
    expect((await db.ledger.list({ graph: 'nope' })).jobs).toHaveLength(0);
  });

  it('with RUNLEDGER_ENCRYPTION_KEY, submit seals the input at rest and job reads it back', async () => {
    const sealed = { ...env, RUNLEDGER_ENCRYPTION_KEY: `k1:${randomBytes(32).toString('base64')}` };
    const run = await runCli(['submit', 'echo', '--input', '{"steps":3}', '--json'], sealed);
    expect(run.code, run.stderr).toBe(0);
    const { jobId } = JSON.parse(run.stdout);
    const stored = await readStoredPayloads(db.ledger.pool, jobId);
    expect(stored && isFullySealed(stored)).toBe(true);
    expect(JSON.parse((await runCli(['job', jobId, '--json'], sealed)).stdout).job.input).toEqual({ steps: 3 });
  });

  it('jobs lists the newest jobs as a table and filters them', async () => {
    const { job } = await db.ledger.admit({ graph: 'vacation', input: {} });
    const all = await runCli(['jobs'], env);
    expect(all.code, all.stderr).toBe(0);
    expect(all.stdout.split('\n')[0]).toMatch(/^JOB\s+GRAPH\s+STATUS\s+ATTEMPT\s+ACCEPTED/);
    expect(all.stdout).toContain(job.jobId);

    const echoOnly = await runCli(['jobs', '--graph', 'echo', '--limit', '50'], env);
    expect(echoOnly.stdout).not.toContain(job.jobId);
    expect((await runCli(['jobs', '--status', 'completed'], env)).stdout).toContain('No jobs match');

    const badStatus = await runCli(['jobs', '--status', 'done'], env);
    expect(badStatus.code).toBe(2);
    expect(errorLine(badStatus)).toContain('--status must be one of');
  });

  it('job shows fields, timeline, effects and checkpoints; an unknown id is one line and exit 1', async () => {
    const { job } = await db.ledger.admit({ graph: 'echo', input: { steps: 1 } });
    const run = await runCli(['job', job.jobId], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/status\s+accepted/);
    expect(run.stdout).toMatch(/Timeline \(1 events\)[\s\S]*accepted/);
    expect(run.stdout).toContain('Effects (0)');
    expect(run.stdout).toContain(`Checkpoints of thread ${job.threadId}: 0`);

    const missing = randomUUID();
    const unknown = await runCli(['job', missing], env);
    expect(unknown.code).toBe(1);
    expect(errorLine(unknown)).toBe(`runledger: Job ${missing} not found.`);
  });

  it('cancel stops an accepted job; cancelling it again says why not', async () => {
    const { job } = await db.ledger.admit({ graph: 'echo', input: {} });
    const run = await runCli(['cancel', job.jobId, '--note', 'test'], env);
    expect(run.code, run.stderr).toBe(0);
    expect((await db.ledger.get(job.jobId)).status).toBe('cancelled');
    const again = await runCli(['cancel', job.jobId], env);
    expect(again.code).toBe(1);
    expect(errorLine(again)).toContain(`Cannot cancel job ${job.jobId}: it is cancelled.`);
  });

  it('jobs and job name the job a waiting job waits for; cancelling that one delivers the waiting job', async () => {
    const threadId = `cli-wait-${randomUUID()}`;
    const { job: holder } = await db.ledger.admit({ graph: 'echo', input: {}, threadId });
    const { job: waiting } = await db.ledger.admit({ graph: 'echo', input: {}, threadId });
    const list = await runCli(['jobs', '--thread', threadId], env);
    expect(list.stdout).toContain(`accepted, waits for ${holder.jobId.slice(0, 8)}`);
    const show = await runCli(['job', waiting.jobId], env);
    expect(show.stdout).toContain(`job ${holder.jobId} holds thread ${threadId}`);
    const run = await runCli(['cancel', holder.jobId], env);
    expect(run.code, run.stderr).toBe(0);
    // Nothing was queued in this test, so the waiting job gets a delivery of its own.
    expect(await db.ledger.get(waiting.jobId)).toMatchObject({ blockedBy: null, deliveries: 2, deliveryId: `${waiting.jobId}-d1` });
  });

  it('resolve closes a manual_reconcile job with a note; replay puts one back in the queue', async () => {
    const resolved = await parkedForAPerson();
    const noNote = await runCli(['resolve', resolved, '--outcome', 'failed'], env);
    expect(noNote.code).toBe(2);
    expect(errorLine(noNote)).toContain('--note is required');
    const run = await runCli(['resolve', resolved, '--outcome', 'failed', '--note', 'booked twice, refunded by hand'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(await db.ledger.get(resolved)).toMatchObject({ status: 'failed', error: { message: 'booked twice, refunded by hand' } });

    const replayed = await parkedForAPerson();
    const replay = await runCli(['replay', replayed, '--note', 'provider says nothing was booked'], env);
    expect(replay.code, replay.stderr).toBe(0);
    expect(replay.stdout).toContain('queued on PostgreSQL');
    expect(await db.ledger.get(replayed)).toMatchObject({ status: 'accepted', deliveries: 2, deliveryId: `${replayed}-d1` });
  });

  it('resume refuses a job that is not interrupted and a missing --value', async () => {
    const { job } = await db.ledger.admit({ graph: 'echo', input: {} });
    const missing = await runCli(['resume', job.jobId], env);
    expect(missing.code).toBe(2);
    expect(errorLine(missing)).toContain('--value is required');
    const wrongState = await runCli(['resume', job.jobId, '--value', 'true'], env);
    expect(wrongState.code).toBe(1);
    expect(errorLine(wrongState)).toContain(`Cannot resume job ${job.jobId}: it is accepted.`);
  });

  it('reconcile delivers an admitted job that never reached the queue', async () => {
    const { job } = await db.ledger.admit({ graph: 'echo', input: {} });
    // The admission issued its first delivery, which never reached the queue.
    expect(job).toMatchObject({ deliveries: 1, deliveryId: job.jobId });
    const run = await runCli(['reconcile', '--grace-ms', '0'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/reconciler sweep: \d+ expired lease\(s\) moved to recovery_required, [1-9]\d* job\(s\) delivered again/);
    expect(await db.ledger.get(job.jobId)).toMatchObject({ deliveries: 2, deliveryId: `${job.jobId}-d1` });
  });

  it('doctor passes PostgreSQL, schema and queue, and fails on no live worker with a fix', async () => {
    const run = await runCli(['doctor'], env);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/✓ PostgreSQL\s+\d+/);
    expect(run.stdout).toMatch(new RegExp(`✓ schema\\s+${db.schema} at migration (\\d+) of \\1`));
    expect(run.stdout).toMatch(/✓ queue\s+BullMQ PostgreSQL backend/);
    expect(run.stdout).toMatch(/✗ workers\s+no heartbeat/);
    expect(run.stdout).toContain('fix: start workers with `npm run worker`');
  });

  it('no reachable database, no DATABASE_URL, an unknown command: one line and a non-zero exit', async () => {
    const closed = `postgres://postgres@127.0.0.1:${await freePort()}/postgres`;
    const down = await runCli(['jobs'], { ...env, DATABASE_URL: closed });
    expect(down.code).toBe(1);
    expect(errorLine(down)).toMatch(/^runledger: PostgreSQL is unreachable at 127\.0\.0\.1:\d+\/postgres .*ECONNREFUSED.*set DATABASE_URL/);

    const unset = await runCli(['jobs'], cliEnv({}));
    expect(unset.code).toBe(1);
    expect(errorLine(unset)).toContain('DATABASE_URL is not set');

    const unknown = await runCli(['frobnicate'], env);
    expect(unknown.code).toBe(2);
    expect(errorLine(unknown)).toMatch(/^runledger: unknown command "frobnicate"\. Run `npx runledger --help`/);

    const help = await runCli(['--help'], env);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('doctor');
  });
});
