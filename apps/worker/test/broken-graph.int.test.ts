// A graph a worker cannot produce (build() throws, or its module fails to load at run time) with
// a real worker process: each claim is one attempt that ends in the ledger, and after the job's
// max_attempts it fails with the reason, instead of being claimed again at every lease expiry.
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { listWorkers } from '../../../packages/ledger/src/index';
import { deliver, openQueue } from '../../../packages/queue/src/index';
import { sleep, type TestDb, testDb, waitFor } from '../../../test/support/db';
import { processRegistry, queueConfigFor, spawnWorker, stackEnv, submit, waitForStatus } from '../../../test/support/stack';
import '../../../test/support/provided';

const fixture = path.join(import.meta.dirname, 'fixtures/fragile-graphs.ts');

describe('a graph the worker cannot build or load (Redis queue, real worker processes)', () => {
  let db: TestDb;
  let env: NodeJS.ProcessEnv;
  let q: ReturnType<typeof queueConfigFor>;
  const procs = processRegistry();

  const worker = async (id: string, fail?: 'build' | 'load') => {
    const p = procs.add(spawnWorker(env, id, fail ? { FIXTURE_FAIL: fail } : {}));
    await waitFor(
      `worker ${id} to announce itself`,
      async () => (await listWorkers(db.ledger.pool)).find((w) => w.workerId === id && w.seenMsAgo < 2_000),
      90_000,
      200,
    );
    return p;
  };
  const claims = async (jobId: string) => (await db.ledger.events(jobId)).filter((e) => e.type === 'claimed').length;

  beforeAll(async () => {
    db = await testDb('broken_graph');
    q = queueConfigFor('redis', db.url, db.schema, inject('redisUrl'));
    // A short lease: the bug claimed the job again at every expiry.
    env = stackEnv(q, db.url, db.schema, { RUNLEDGER_GRAPHS: fixture, RUNLEDGER_BUILD_ID: 'b1', LEASE_TTL_MS: '1500', SWEEP_INTERVAL_MS: '300' });
  });
  afterEach((ctx) => procs.cleanup(ctx));
  afterAll(() => db?.close());

  it('build() throws: the job fails after its attempts, with the build error, and is never claimed again', async () => {
    await worker('w-build', 'build');
    const job = await submit(db.ledger, q, { graph: 'fragile', input: {}, maxAttempts: 2 });
    const failed = await waitForStatus(db.ledger, job.jobId, ['failed'], 60_000);
    expect(failed.attempt).toBe(2);
    expect(failed.error).toMatchObject({ code: 'graph_unavailable', attemptsExhausted: true, attempt: 2 });
    expect(String((failed.error as { message?: string }).message)).toContain('has no edge out');
    // Three lease lifetimes later: still failed, still two claims.
    await sleep(4_500);
    expect([(await db.ledger.get(job.jobId)).status, (await db.ledger.get(job.jobId)).attempt, await claims(job.jobId)]).toEqual(['failed', 2, 2]);
    // Attempt 1 ends with a retry later (not an expired lease), attempt 2 with the failure.
    const types = (await db.ledger.events(job.jobId)).map((e) => e.type);
    expect(types.filter((t) => ['recovery_required', 'lease_lost', 'failed'].includes(t))).toEqual(['recovery_required', 'failed']);
  }, 180_000);

  it('the module fails to load on resume: the parked job fails after its attempts instead of looping', async () => {
    const healthy = await worker('w-healthy');
    const job = await submit(db.ledger, q, { graph: 'fragile', input: {}, maxAttempts: 2 });
    await waitForStatus(db.ledger, job.jobId, ['interrupted'], 60_000);
    healthy.kill('SIGTERM');
    await healthy.exited;

    await worker('w-load', 'load');
    const queue = openQueue(q);
    await deliver(queue, db.ledger, await db.ledger.resume(job.jobId, true)).finally(() => queue.close());
    const failed = await waitForStatus(db.ledger, job.jobId, ['failed'], 60_000);
    expect(failed.attempt).toBe(2);
    expect(failed.error).toMatchObject({ code: 'graph_unavailable', attemptsExhausted: true });
    expect(String((failed.error as { message?: string }).message)).toContain('Cannot find module');
    await sleep(4_500);
    const after = await db.ledger.get(job.jobId);
    expect([after.status, after.attempt]).toEqual(['failed', 2]);
    expect(await claims(job.jobId)).toBe(3); // the first run that parked it, then the two attempts after the resume
  }, 180_000);
});
