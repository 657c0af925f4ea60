// chaosAudit.wrongVersionSteps: the chaos harness's deploy check, read from job_events and the
// versions workers announced (workers.info), judged by the job's version at the time of each row.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type TestDb, testDb } from '../../../test/support/db';
import { chaosAudit, graphVersionKey, registerWorker, type WorkerAnnouncement } from '../src/index';

let db: TestDb;
beforeAll(async () => {
  db = await testDb('chaos_audit');
  const announce = (version: string, resumes: string[] = []): WorkerAnnouncement => ({
    serves: [graphVersionKey('echo', version), graphVersionKey('echo', null)],
    versions: { echo: version },
    resumes: resumes.length > 0 ? { echo: resumes } : {},
    concurrency: {},
  });
  await registerWorker(db.ledger.pool, 'v1-worker', announce('v1'));
  await registerWorker(db.ledger.pool, 'v2-worker', announce('v2', ['v1']));
});
afterAll(() => db.close());

async function admitted(version: string | undefined): Promise<string> {
  return (await db.ledger.admit({ graph: 'echo', input: {}, graphVersion: version })).job.jobId;
}

it('counts rows a worker wrote for a version it did not serve, judged by the version at the time of each row', async () => {
  const { ledger, ledger: l } = db;
  const before = await chaosAudit.wrongVersionSteps(ledger.pool);
  expect(before).toMatchObject({ checked: 0, count: 0, claims: 0 });

  // Served: v1 runs on the v1 worker; a job with no version runs anywhere and is not judged.
  const right = await admitted('v1');
  expect((await l.claim(right, 'v1-worker')).ok).toBe(true);
  await l.appendEvent(right, 1, 'node_entered', { node: 'step' });
  await l.complete(right, 1, { done: 1 });
  const any = await admitted(undefined);
  expect((await l.claim(any, 'v2-worker')).ok).toBe(true);
  // Moved by an operator: its v1 claim was right then, its v2 claim after the upgrade too.
  const moved = await admitted('v1');
  expect((await l.claim(moved, 'v1-worker')).ok).toBe(true);
  await l.release(moved, 1);
  expect((await l.upgrade({ graph: 'echo', from: 'v1', to: 'v2', jobId: moved })).jobs[0]).toMatchObject({ moved: true });
  expect((await l.claim(moved, 'v2-worker')).ok).toBe(true);
  expect(await chaosAudit.wrongVersionSteps(ledger.pool)).toMatchObject({ count: 0, claims: 0 });

  // Wrong: a v1 job claimed (no serves check) and stepped by the v2 worker, and one claimed by a
  // worker that never announced anything.
  const wrong = await admitted('v1');
  expect((await l.claim(wrong, 'v2-worker')).ok).toBe(true);
  await l.appendEvent(wrong, 1, 'node_entered', { node: 'step' });
  const unknown = await admitted('v1');
  expect((await l.claim(unknown, 'ghost')).ok).toBe(true);
  const after = await chaosAudit.wrongVersionSteps(ledger.pool);
  expect(after).toMatchObject({ count: 3, claims: 2 });
  expect(after.checked).toBeGreaterThan(after.count);
  expect(after.sample).toEqual(
    expect.arrayContaining([
      `${wrong} claimed by v2-worker serving v2, job at v1`,
      `${wrong} node_entered by v2-worker serving v2, job at v1`,
      `${unknown} claimed by ghost serving nothing, job at v1`,
    ]),
  );
});
