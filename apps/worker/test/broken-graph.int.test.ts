// A graph a worker cannot produce (build() throws, or its module fails to load at run time) with
// a real worker process: each claim is one attempt that ends in the ledger, and after the job's
// max_attempts it fails with the reason, instead of being claimed again at every lease expiry.
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sleep } from '../../../test/support/db';
import { submit, waitForStatus } from '../../../test/support/stack';
import { startWorkerProcesses, type WorkerProcesses } from './worker-processes';

const fixture = path.join(import.meta.dirname, 'fixtures/fragile-graphs.ts');

describe('a graph the worker cannot build or load (Redis queue, real worker processes)', () => {
  let w: WorkerProcesses;
  const worker = (id: string, fail?: 'build' | 'load') => w.start(id, fail ? { FIXTURE_FAIL: fail } : {});

  beforeAll(async () => {
    // A short lease: the bug claimed the job again at every expiry.
    w = await startWorkerProcesses('broken_graph', { RUNLEDGER_GRAPHS: fixture, RUNLEDGER_BUILD_ID: 'b1', LEASE_TTL_MS: '1500', SWEEP_INTERVAL_MS: '300' });
  });
  afterEach((ctx) => w?.cleanup(ctx));
  afterAll(() => w?.close());

  it('build() throws: the job fails after its attempts, with the build error, and is never claimed again', async () => {
    const { db, q, claims } = w;
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
    const { db, q, claims, deliver } = w;
    const healthy = await worker('w-healthy');
    const job = await submit(db.ledger, q, { graph: 'fragile', input: {}, maxAttempts: 2 });
    await waitForStatus(db.ledger, job.jobId, ['interrupted'], 60_000);
    healthy.kill('SIGTERM');
    await healthy.exited;

    await worker('w-load', 'load');
    await deliver(await db.ledger.resume(job.jobId, true));
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
