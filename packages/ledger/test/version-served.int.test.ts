// versionServed on every statement that returns jobs (get_job, list_jobs, operator_transition,
// all through job_version_served of migration 0013): whether a live worker serves a waiting job's
// graph and version, null once the job does not wait. Announcements are written as a worker
// writes them (registerWorker, retireWorker).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDb, testDb } from '../../../test/support/db';
import { registerWorker, retireWorker } from '../src/index';
import { jobIn } from './support/jobs';

let db: TestDb;
beforeAll(async () => {
  db = await testDb('version_served');
});
afterAll(() => db.close());

const announce = (workerId: string, version: string) =>
  registerWorker(db.ledger.pool, workerId, { serves: [`echo@${version}`], versions: { echo: version }, resumes: {}, concurrency: {} });
const listed = async (jobId: string) => (await db.ledger.list({ graph: 'echo', limit: 100 })).jobs.find((j) => j.jobId === jobId)?.versionServed;

describe('versionServed (job_version_served)', () => {
  it('is false while no live worker serves a waiting job, true once one does, and null when the job does not wait', async () => {
    const { job } = await jobIn(db.ledger, 'interrupted', { graphVersion: 'vs1' });
    expect([(await db.ledger.get(job.jobId)).versionServed, await listed(job.jobId)]).toEqual([false, false]);

    await announce('w-vs1', 'vs1');
    expect([(await db.ledger.get(job.jobId)).versionServed, await listed(job.jobId)]).toEqual([true, true]);
    // operator_transition returns the moved row with the same column.
    const resumed = await db.ledger.resume(job.jobId, true);
    expect([resumed.status, resumed.versionServed]).toEqual(['accepted', true]);

    await retireWorker(db.ledger.pool, 'w-vs1');
    expect([(await db.ledger.get(job.jobId)).versionServed, await listed(job.jobId)]).toEqual([false, false]);

    const cancelled = await db.ledger.cancel(job.jobId);
    expect([cancelled.status, cancelled.versionServed]).toEqual(['cancelled', null]);
    expect([(await db.ledger.get(job.jobId)).versionServed, await listed(job.jobId)]).toEqual([null, null]);
  });

  it('is null for a running job, whatever workers serve', async () => {
    await announce('w-vs2', 'vs2');
    const { job } = await jobIn(db.ledger, 'running', { graphVersion: 'vs2' });
    expect([(await db.ledger.get(job.jobId)).versionServed, await listed(job.jobId)]).toEqual([null, null]);
    const failed = await jobIn(db.ledger, 'manual_reconcile', { graphVersion: 'vs2' });
    expect((await db.ledger.resolve(failed.job.jobId, 'failed', 'gave up')).versionServed).toBeNull();
  });
});
