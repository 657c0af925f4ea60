// The `runledger` CLI beside a real worker process: watch follows a job to the end, resume
// continues an interrupted one, job counts the thread's checkpoints, doctor sees the worker.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type TestDb, testDb, waitFor } from '../../../test/support/db';
import { type Proc, queueConfigFor, spawnWorker, stackEnv } from '../../../test/support/stack';
import { cliEnv, runCli } from './cli-process';
import '../../../test/support/provided';

describe('runledger CLI with a worker', { timeout: 120_000 }, () => {
  let db: TestDb;
  let env: NodeJS.ProcessEnv;
  let worker: Proc;

  beforeAll(async () => {
    db = await testDb('cli_worker');
    const q = queueConfigFor('postgres', db.url, db.schema, null);
    worker = spawnWorker(stackEnv(q, db.url, db.schema), 'cli-test-worker');
    await waitFor('the worker to start', async () => worker.output().includes('worker started'), 60_000);
    env = cliEnv({ DATABASE_URL: db.url, DB_SCHEMA: db.schema, QUEUE_BACKEND: 'postgres' });
  });
  afterAll(async () => {
    worker?.kill('SIGTERM');
    await worker?.exited;
    await db?.close();
  });

  const submitted = async (args: string[]): Promise<string> => {
    const run = await runCli(['submit', ...args, '--json'], env);
    if (run.code !== 0) throw new Error(`submit failed: ${run.stderr}`);
    return JSON.parse(run.stdout).jobId as string;
  };

  it('watch prints the timeline live and exits 0 when the job completes', async () => {
    const jobId = await submitted(['vacation', '--input', '{"delays":{"car":300}}']);
    const run = await runCli(['watch', jobId], env);
    expect(run.code, run.stderr + worker.output()).toBe(0);
    for (const line of ['accepted', 'claimed', 'checkpointed', 'effect book_flight committed: FLIGHT-', 'effect book_car committed: CAR-', 'completed']) {
      expect(run.stdout).toContain(line);
    }
    expect(run.stdout).toMatch(/Job completed after 1 attempt\(s\): result "Your vacation is booked/);
    expect((await db.ledger.get(jobId)).status).toBe('completed');

    const details = await runCli(['job', jobId], env);
    expect(details.stdout).toMatch(/Effects \(3\)/);
    // The run's messages as a conversation, not serialised LangChain objects.
    expect(details.stdout).toMatch(/Conversation \(6 messages\)\n {2}user +Book/);
    expect(details.stdout).toMatch(/ {2}assistant +call book_flight\(\{.*\}\)\n +call book_hotel\(/);
    expect(details.stdout).toMatch(/ {2}book_flight +→ .*FLIGHT-\d+/);
    expect(details.stdout).not.toContain('kwargs');
    expect(details.stdout).toMatch(/Checkpoints of thread \S+: [1-9]\d*/);
  });

  it('watch stops at an interrupt; resume continues the job to completed', async () => {
    const jobId = await submitted(['approval', '--input', '{"request":"buy a boat"}']);
    const parked = await runCli(['watch', jobId], env);
    expect(parked.code, parked.stderr).toBe(0);
    expect(parked.stdout).toContain(
      `the graph asks "Approve "buy a boat"? Resume with { "approved": true|false }."; continue it: npx runledger resume ${jobId}`,
    );
    const asked = await runCli(['job', jobId], env);
    expect(asked.stdout).toMatch(/the graph asks +Approve "buy a boat"\?/);
    expect((await db.ledger.get(jobId)).status).toBe('interrupted');

    const resumed = await runCli(['resume', jobId, '--value', '{"approved":true}'], env);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('queued on PostgreSQL');
    const done = await runCli(['watch', jobId], env);
    expect(done.code, done.stderr).toBe(0);
    expect(await db.ledger.get(jobId)).toMatchObject({ status: 'completed', result: { outcome: 'buy a boat: approved' } });
  });

  it('watch exits 1 for a job that fails', async () => {
    const jobId = await submitted(['echo', '--input', '{"failTimes":5}', '--max-attempts', '1']);
    const run = await runCli(['watch', jobId], env);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('Job failed after 1 attempt(s)');
  });

  it('doctor passes every check with a live worker', async () => {
    const run = await runCli(['doctor'], env);
    expect(run.stdout).toMatch(/✓ workers\s+1 live: cli-test-worker/);
    expect(run.stdout).toContain('All checks passed.');
    expect(run.code).toBe(0);
  });

  it.runIf(inject('redisUrl'))('doctor checks Redis reachability, eviction policy and persistence', async () => {
    const run = await runCli(['doctor'], { ...env, QUEUE_BACKEND: 'redis', REDIS_URL: inject('redisUrl') ?? '', QUEUE_PREFIX: 'tclidoctor' });
    expect(run.stdout).toMatch(/✓ Redis\s+\d+\.\d+/);
    expect(run.stdout).toMatch(/[✓✗] Redis eviction\s+maxmemory-policy/);
    expect(run.stdout).toMatch(/[✓✗] Redis persistence/);
    expect(run.stdout).toMatch(/✓ queue\s+BullMQ on Redis, prefix tclidoctor/);
  });
});
