// The upgrade action and the version fields of /v1/jobs: what an operator sees and does when no
// live worker serves a job's graph version. Worker announcements are written as a worker writes
// them (registerWorker); the process-level roll-out is apps/worker/test/versions.int.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerWorker } from '../../../packages/ledger/src/index';
import { allJobs, backends, type Harness, startHarness } from './harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness('upgrade', { backend: backends()[0] });
});
afterAll(() => h?.close());

const job = async (jobId: string) => (await h.app.inject({ method: 'GET', url: `/v1/jobs/${jobId}` })).json();
const metrics = async () => (await h.app.inject({ method: 'GET', url: '/metrics' })).body;
const upgrade = (jobId: string, payload: object) => h.app.inject({ method: 'POST', url: `/v1/jobs/${jobId}/upgrade`, payload });

describe('graph versions on /v1/jobs', () => {
  it('records the admitting version, says why a job waits, and moves it only to a version a worker announced', async () => {
    const admitted = await h.app.inject({ method: 'POST', url: '/v1/jobs', payload: { graph: 'echo', input: {} } });
    const { jobId } = admitted.json();
    const version = (await job(jobId)).graphVersion as string;
    expect(version).toMatch(/^\d+\.\d+\.\d+$/); // the repository's package.json version
    expect((await job(jobId)).waitingFor).toBe(`no live worker serves echo@${version}`);
    expect(await metrics()).toContain(`runledger_jobs_waiting_for_version{graph="echo",version="${version}"} 1`);

    const before = await allJobs(h.db);
    const unknown = await upgrade(jobId, { to: 'v9' });
    expect([unknown.statusCode, unknown.json().error.code]).toEqual([400, 'invalid_request']);
    expect(unknown.json().error.message).toContain('echo@v9');
    expect(await allJobs(h.db)).toEqual(before);

    await registerWorker(h.db.ledger.pool, 'w-v9', { serves: ['echo@v9', 'echo@*'], versions: { echo: 'v9' }, resumes: {}, concurrency: {} });
    const moved = await upgrade(jobId, { to: 'v9', note: 'roll-out 42' });
    expect(moved.statusCode).toBe(200);
    expect(moved.json()).toMatchObject({ jobId, status: 'accepted', graphVersion: 'v9' });
    expect((await job(jobId)).waitingFor).toBeNull();
    expect(await metrics()).not.toContain('runledger_jobs_waiting_for_version{graph="echo"');
    const events = (await h.app.inject({ method: 'GET', url: `/v1/jobs/${jobId}/events` })).json().events;
    expect(events.find((e: { type: string }) => e.type === 'upgraded').detail).toEqual({ from: version, to: 'v9', replay: false, note: 'roll-out 42' });

    const again = await upgrade(jobId, { to: 'v9' });
    expect([again.statusCode, again.json().error.code]).toEqual([409, 'invalid_state']);
    const bad = await upgrade(jobId, { to: '' });
    expect(bad.statusCode).toBe(400);
  });
});
