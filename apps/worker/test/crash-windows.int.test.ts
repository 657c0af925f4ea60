// Crash windows C, D, G, H, I and L of ARCHITECTURE.md, Failure → behaviour with real worker processes and real signals.
// Each test: worker A runs the job and is killed (or paused, or stopped) at the window; worker
// B recovers it. Node entries are counted from fenced `node_entered` events of all attempts.
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { type TestDb, testDb, waitFor } from '../../../test/support/db';
import { nodeEntries, processRegistry, queueConfigFor, spawnWorker, stackEnv, submit, waitForEvent, waitForStatus } from '../../../test/support/stack';
import '../../../test/support/provided';

const backends = (['redis', 'postgres'] as const).filter((b) => b === 'postgres' || inject('redisUrl'));

describe.each(backends)('crash windows on the %s queue backend', (backend) => {
  let db: TestDb;
  let env: NodeJS.ProcessEnv;
  let q: ReturnType<typeof queueConfigFor>;
  const procs = processRegistry();
  const worker = (id: string, extra: Record<string, string> = {}) => {
    return procs.add(spawnWorker(env, id, extra));
  };

  beforeAll(async () => {
    db = await testDb(`crash_${backend}`);
    q = queueConfigFor(backend, db.url, db.schema, inject('redisUrl'));
    env = stackEnv(q, db.url, db.schema, { LEASE_TTL_MS: '1500', SWEEP_INTERVAL_MS: '250', WORKER_CONCURRENCY: '4' });
  });
  afterEach((ctx) => procs.cleanup(ctx));
  afterAll(() => db?.close());

  it('C: killed after the claim, before any checkpoint → replays the stored input', async () => {
    const a = worker('a-C', { RUNLEDGER_TEST_CRASH_AT: 'after_claim' });
    const job = await submit(db.ledger, q, { graph: 'echo', input: { steps: 2, traceNodes: true } });
    await a.exited;
    expect((await db.ledger.get(job.jobId)).firstCheckpointAt).toBeNull();
    worker('b-C');
    const done = await waitForStatus(db.ledger, job.jobId, ['completed', 'failed', 'manual_reconcile']);
    expect(done.status).toBe('completed');
    const types = (await db.ledger.events(job.jobId)).map((e) => e.type);
    expect(types).toContain('replayed');
    expect(await nodeEntries(db.ledger, job.jobId)).toEqual({ step1: 1, step2: 1 });
  });

  it('D: killed during the first node (input checkpoint saved) → resumes, nothing redone twice', async () => {
    const a = worker('a-D');
    const job = await submit(db.ledger, q, { graph: 'echo', input: { steps: 2, sleepMs: 1_000, traceNodes: true } });
    await waitForEvent(db.ledger, job.jobId, 'step1 entered', (e) => e.type === 'node_entered');
    a.kill('SIGKILL');
    await a.exited;
    expect((await db.ledger.get(job.jobId)).firstCheckpointAt).not.toBeNull();
    worker('b-D');
    const done = await waitForStatus(db.ledger, job.jobId, ['completed', 'failed']);
    expect(done.status).toBe('completed');
    expect((await db.ledger.events(job.jobId)).map((e) => e.type)).toContain('resumed');
    // step1 never finished on A, so B runs it again; step2 runs once.
    expect(await nodeEntries(db.ledger, job.jobId)).toEqual({ step1: 2, step2: 1 });
  });

  it('G: killed during the final node → finished steps are not re-entered', async () => {
    const a = worker('a-G');
    const job = await submit(db.ledger, q, { graph: 'echo', input: { steps: 3, sleepMs: 400, traceNodes: true } });
    await waitForEvent(db.ledger, job.jobId, 'step3 entered', (e) => e.type === 'node_entered' && e.detail.node === 'step3');
    a.kill('SIGKILL');
    await a.exited;
    worker('b-G');
    const done = await waitForStatus(db.ledger, job.jobId, ['completed', 'failed']);
    expect(done.result).toMatchObject({ done: 3 });
    expect(await nodeEntries(db.ledger, job.jobId)).toEqual({ step1: 1, step2: 1, step3: 2 });
  });

  it('H: killed after the graph ended, before the ledger completion → recorded completed without rerunning', async () => {
    const a = worker('a-H', { RUNLEDGER_TEST_CRASH_AT: 'after_invoke' });
    const job = await submit(db.ledger, q, { graph: 'echo', input: { steps: 2, traceNodes: true } });
    await a.exited;
    expect((await db.ledger.get(job.jobId)).status).toBe('running');
    worker('b-H');
    const done = await waitForStatus(db.ledger, job.jobId, ['completed', 'failed']);
    expect(done.status).toBe('completed');
    expect(done.result).toMatchObject({ done: 2 });
    const completed = (await db.ledger.events(job.jobId)).find((e) => e.type === 'completed');
    expect(completed?.detail).toMatchObject({ decision: 'already_finished' });
    expect(await nodeEntries(db.ledger, job.jobId)).toEqual({ step1: 1, step2: 1 });
  });

  it('I: a worker paused past its lease wakes up and every write it tries is refused', async () => {
    const a = worker('a-I');
    const job = await submit(db.ledger, q, { graph: 'echo', input: { steps: 2, sleepMs: 2_500, traceNodes: true } });
    await waitForEvent(db.ledger, job.jobId, 'step1 entered', (e) => e.type === 'node_entered');
    a.kill('SIGSTOP');
    worker('b-I');
    const bClaim = await waitFor('claim by b-I', async () => (await db.ledger.events(job.jobId)).find((e) => e.type === 'claimed' && e.workerId === 'b-I'));
    a.kill('SIGCONT');
    const done = await waitForStatus(db.ledger, job.jobId, ['completed', 'failed']);
    expect(done.status).toBe('completed');
    expect(done.leaseOwner).toBeNull();
    await waitFor('A to report the lost lease', async () => a.output().includes('lease lost'), 10_000);
    // Applied = 0: after B's claim no row carries A's token.
    const staleAfterTakeover = (await db.ledger.events(job.jobId)).filter((e) => e.eventId > bClaim.eventId && e.fencingToken < 2);
    expect(staleAfterTakeover).toEqual([]);
    expect(done.fencingToken).toBe(2);
  });

  it('L: SIGTERM mid-run drains at a step boundary and hands over without waiting for the TTL', async () => {
    // Both workers are up before the job exists, so a slow start-up on a loaded machine cannot
    // let the job finish before the drain; the one that claims it is stopped, the other takes over.
    const workers = { 'a-L': worker('a-L'), 'b-L': worker('b-L') };
    await waitFor('both workers to start', async () => Object.values(workers).every((w) => w.output().includes('worker started')), 30_000);
    const job = await submit(db.ledger, q, { graph: 'echo', input: { steps: 6, sleepMs: 1_500, traceNodes: true } });
    await waitForEvent(db.ledger, job.jobId, 'step1 entered', (e) => e.type === 'node_entered');
    const holder = (await db.ledger.events(job.jobId)).find((e) => e.type === 'claimed')!.workerId;
    const [a, successor] = holder === 'a-L' ? [workers['a-L'], 'b-L'] : [workers['b-L'], 'a-L'];
    a.kill('SIGTERM');
    expect(await a.exited).toBe(0);
    const done = await waitForStatus(db.ledger, job.jobId, ['completed', 'failed']);
    expect(done.status).toBe('completed');
    const events = await db.ledger.events(job.jobId);
    const released = events.find((e) => e.type === 'recovery_required' && e.detail.reason === 'drained');
    const reclaimed = events.find((e) => e.type === 'claimed' && e.workerId === successor);
    if (!released || !reclaimed)
      throw new Error(`no drained hand-over in ${events.map((e) => `${e.type}:${e.workerId}:${JSON.stringify(e.detail)}`).join(', ')}`);
    expect(reclaimed.at.getTime() - released.at.getTime()).toBeLessThan(2_000);
    // The step in flight finished before the drain: nothing ran twice.
    expect(await nodeEntries(db.ledger, job.jobId)).toEqual({ step1: 1, step2: 1, step3: 1, step4: 1, step5: 1, step6: 1 });
  });
});
