// Graph versions and worker pools with real worker processes and real signals (issue: deploys
// without surprises). Versions come from the fixture graph module (FIXTURE_VERSION); every step
// records the version that ran it, so "no step ran on a version it was not allowed to" is read
// from the job's own result.
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sleep, waitFor } from '../../../test/support/db';
import { submit, waitForStatus } from '../../../test/support/stack';
import { startWorkerProcesses, type WorkerProcesses } from './worker-processes';

const fixture = path.join(import.meta.dirname, 'fixtures/versioned-graphs.ts');

describe('graph versions and pools (Redis queue, real worker processes)', () => {
  let w: WorkerProcesses;

  /** A worker process serving `deploy` at `version` (and the built-in graphs at build b1), once it has announced itself. */
  const worker = (id: string, version: string, extra: Record<string, string> = {}) => w.start(id, { FIXTURE_VERSION: version, ...extra });
  const ran = async (jobId: string) => ((await w.db.ledger.get(jobId)).result as { ran?: string[] } | null)?.ran;
  const resume = async (jobId: string) => w.deliver(await w.db.ledger.resume(jobId, true));

  beforeAll(async () => {
    w = await startWorkerProcesses('versions', {
      RUNLEDGER_GRAPHS: fixture,
      RUNLEDGER_BUILTIN_GRAPHS: '1',
      RUNLEDGER_BUILD_ID: 'b1',
      LEASE_TTL_MS: '4000',
      SWEEP_INTERVAL_MS: '500',
      WORKER_CONCURRENCY: '4',
    });
  });
  afterEach((ctx) => w?.cleanup(ctx));
  afterAll(() => w?.close());

  it('rolling deploy: v1 jobs finish on v1 while a v1 worker lives, then wait visibly; an upgrade moves a parked approval to a compatible v2, and an incompatible v3 only with replay', async () => {
    const { db, q, claims, deliver } = w;
    const v1 = { 'v1-a': await worker('v1-a', 'v1'), 'v1-b': await worker('v1-b', 'v1') };
    const admitV1 = (input: object) => submit(db.ledger, q, { graph: 'deploy', graphVersion: 'v1', input });
    const parked = [await admitV1({ ask: true }), await admitV1({ ask: true })];
    for (const p of parked) await waitForStatus(db.ledger, p.jobId, ['interrupted'], 60_000);

    // v2 workers start (v2 declares v1's checkpoints compatible) while v1 jobs are still admitted
    // and in flight; then admission switches to v2.
    const v2 = await worker('v2-a', 'v2', { FIXTURE_RESUMES: 'v1' });
    const inFlight = [await admitV1({ sleepMs: 3_000 }), await admitV1({ sleepMs: 3_000 }), await admitV1({ sleepMs: 3_000 })];
    const fresh = [
      await submit(db.ledger, q, { graph: 'deploy', graphVersion: 'v2', input: {} }),
      await submit(db.ledger, q, { graph: 'deploy', graphVersion: 'v2', input: {} }),
    ];

    // A v1 worker running a job is SIGKILLed; the job recovers on the other v1 worker, never on v2.
    const victim = await waitFor(
      'a v1 job running',
      async () => {
        for (const j of inFlight) {
          const owner = (await db.ledger.get(j.jobId)).leaseOwner;
          if (owner === 'v1-a' || owner === 'v1-b') return { job: j, owner: owner as keyof typeof v1 };
        }
        return undefined;
      },
      60_000,
    );
    const survivor: keyof typeof v1 = victim.owner === 'v1-a' ? 'v1-b' : 'v1-a';
    v1[victim.owner].kill('SIGKILL');
    for (const j of inFlight) expect((await waitForStatus(db.ledger, j.jobId, ['completed', 'failed'], 90_000)).status).toBe('completed');
    for (const j of inFlight) expect(await ran(j.jobId)).toEqual(['start@v1', 'gate@v1', 'finish@v1']);
    expect((await db.ledger.events(victim.job.jobId)).some((e) => e.type === 'claimed' && e.workerId === survivor)).toBe(true);
    for (const j of fresh) {
      await waitForStatus(db.ledger, j.jobId, ['completed'], 60_000);
      expect(await ran(j.jobId)).toEqual(['start@v2', 'gate@v2', 'finish@v2']);
    }
    // No v1 job was ever claimed by the v2 worker, nor a v2 job by a v1 worker.
    for (const j of [...parked, ...inFlight])
      expect((await db.ledger.events(j.jobId)).filter((e) => e.type === 'claimed').map((e) => e.workerId)).not.toContain('v2-a');
    for (const j of fresh) expect((await db.ledger.events(j.jobId)).find((e) => e.type === 'claimed')?.workerId).toBe('v2-a');

    // The last v1 worker is SIGTERMed; a parked v1 approval resumed now waits with its reason.
    v1[survivor].kill('SIGTERM');
    await v1[survivor].exited;
    const [first, second] = parked as [(typeof parked)[0], (typeof parked)[0]];
    await resume(first.jobId);
    await waitFor('the v2 worker to hand the v1 job back', async () =>
      (await db.ledger.events(first.jobId)).find((e) => e.type === 'waiting_for_version' && e.detail.served === false),
    );
    await sleep(2_000);
    const waiting = await db.ledger.get(first.jobId);
    expect([waiting.status, waiting.graphVersion, waiting.versionServed, waiting.attempt]).toEqual(['accepted', 'v1', false, 0]);
    expect(await claims(first.jobId)).toBe(1); // the claim that parked it on v1; none since

    // Upgrade to the compatible v2: it resumes v1's checkpoint and finishes on v2.
    const up = await db.ledger.upgrade({ graph: 'deploy', from: 'v1', to: 'v2', jobId: first.jobId });
    expect(up).toMatchObject({ compatible: true, live: true, jobs: [{ jobId: first.jobId, moved: true, replayed: false }] });
    await deliver(await db.ledger.get(first.jobId));
    await waitForStatus(db.ledger, first.jobId, ['completed'], 60_000);
    expect(await ran(first.jobId)).toEqual(['start@v1', 'gate@v2', 'finish@v2']);
    expect((await db.ledger.events(first.jobId)).find((e) => e.type === 'upgraded')?.detail).toMatchObject({ from: 'v1', to: 'v2' });

    // v3 declares nothing compatible: the parked job is refused unless replayed from its input.
    v2.kill('SIGTERM');
    await v2.exited;
    await worker('v3-a', 'v3');
    const refused = await db.ledger.upgrade({ graph: 'deploy', from: 'v1', to: 'v3', jobId: second.jobId });
    expect(refused.jobs).toEqual([{ jobId: second.jobId, status: 'interrupted', moved: false, replayed: false, refused: 'incompatible' }]);
    expect((await db.ledger.get(second.jobId)).graphVersion).toBe('v1');
    const replayed = await db.ledger.upgrade({ graph: 'deploy', from: 'v1', to: 'v3', jobId: second.jobId, replay: true });
    expect(replayed.jobs[0]).toMatchObject({ moved: true, replayed: true, status: 'accepted' });
    await deliver(await db.ledger.get(second.jobId));
    await waitForStatus(db.ledger, second.jobId, ['interrupted'], 60_000);
    await resume(second.jobId);
    await waitForStatus(db.ledger, second.jobId, ['completed'], 60_000);
    expect(await ran(second.jobId)).toEqual(['start@v3', 'gate@v3', 'finish@v3']);
  }, 400_000);

  it('pools: an echo-only worker never claims a vacation job, which waits visibly (not failed) until a vacation worker is live', async () => {
    const { db, q, claims } = w;
    // A build of its own, so workers of the test before (gone, but seen < 5 s ago) serve none of it.
    const build = { RUNLEDGER_BUILD_ID: 'p1' };
    await worker('pool-echo', 'v1', { RUNLEDGER_WORKER_GRAPHS: 'echo', ...build });
    const echo = await submit(db.ledger, q, { graph: 'echo', graphVersion: 'p1', input: { steps: 1 } });
    const vacation = await submit(db.ledger, q, { graph: 'vacation', graphVersion: 'p1', input: {} });
    await waitForStatus(db.ledger, echo.jobId, ['completed']);
    await sleep(3_000);
    const waiting = await db.ledger.get(vacation.jobId);
    expect([waiting.status, waiting.versionServed, waiting.attempt]).toEqual(['accepted', false, 0]);
    expect(await claims(vacation.jobId)).toBe(0);
    const events = (await db.ledger.events(vacation.jobId)).map((e) => e.type);
    expect(events.filter((t) => t === 'waiting_for_version')).toHaveLength(1);

    await worker('pool-vacation', 'v1', { RUNLEDGER_WORKER_GRAPHS: 'vacation:1', ...build });
    const done = await waitForStatus(db.ledger, vacation.jobId, ['completed', 'failed']);
    expect(done.status).toBe('completed');
    expect((await db.ledger.events(vacation.jobId)).find((e) => e.type === 'claimed')?.workerId).toBe('pool-vacation');
  }, 300_000);
});
