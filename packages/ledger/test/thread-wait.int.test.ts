// A job refused because its thread is held waits in the ledger, not in the queue: one
// `waiting_for_thread` event per job holding it, hidden from the reconciler's undelivered list
// while the thread is held, listed again once it is free; get, list and the count name the
// holder; ending a job says whether its thread has more to hand on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDb, testDb } from '../../../test/support/db';
import type { Ledger } from '../src/index';
import { jobIn } from './support/jobs';

let db: TestDb;
beforeAll(async () => {
  db = await testDb('thread_wait');
});
afterAll(() => db.close());

const undeliveredIds = async (ledger: Ledger) => (await ledger.upkeep.sweep({ graceMs: 0 })).undelivered.map((u) => u.jobId);
const waits = async (ledger: Ledger, jobId: string) => (await ledger.events(jobId)).filter((e) => e.type === 'waiting_for_thread').map((e) => e.detail);

describe('waiting for a thread', () => {
  it('records one waiting_for_thread event per holder, and nothing for a job that is free or gone', async () => {
    const { ledger } = db;
    const threadId = 'wait-events';
    const { job: holder, token } = await jobIn(ledger, 'running', { threadId });
    const { job: waiter } = await ledger.admit({ graph: 'echo', input: {}, threadId });
    expect(await ledger.waitForThread(waiter.jobId)).toBe(holder.jobId);
    expect(await ledger.waitForThread(waiter.jobId)).toBe(holder.jobId);
    expect(await waits(ledger, waiter.jobId)).toEqual([{ blockedBy: holder.jobId }]);
    // The holder's token rules stay intact: the event carries the waiting job's own token.
    expect((await ledger.events(waiter.jobId)).at(-1)).toMatchObject({ type: 'waiting_for_thread', fencingToken: 0, workerId: null });
    await ledger.complete(holder.jobId, token, {});
    expect(await ledger.waitForThread(waiter.jobId)).toBeNull();
    await ledger.cancel(waiter.jobId);
    expect(await ledger.waitForThread(waiter.jobId)).toBeNull();
    expect(await waits(ledger, waiter.jobId)).toHaveLength(1);
  });

  it('keeps jobs of a held thread off the undelivered list, and lists the next one once the thread is free', async () => {
    const { ledger } = db;
    const threadId = 'wait-sweep';
    const { job: parked } = await jobIn(ledger, 'interrupted', { threadId });
    const { job: first } = await ledger.admit({ graph: 'echo', input: {}, threadId });
    const { job: second } = await ledger.admit({ graph: 'echo', input: {}, threadId });
    const { job: elsewhere } = await ledger.admit({ graph: 'echo', input: {} });
    // The same thread id in another tenant is another thread: nothing holds it.
    const { job: otherTenant } = await ledger.admit({ tenant: 'globex', graph: 'echo', input: {}, threadId });
    let listed = await undeliveredIds(ledger);
    expect(listed).toContain(elsewhere.jobId);
    expect(listed).toContain(otherTenant.jobId);
    expect((await ledger.get(otherTenant.jobId)).blockedBy).toBeNull();
    expect(await ledger.nextOfThread(otherTenant)).toMatchObject({ jobId: otherTenant.jobId });
    expect(listed).not.toContain(first.jobId);
    expect(listed).not.toContain(second.jobId);
    expect(await ledger.nextOfThread(first)).toBeUndefined();
    await ledger.cancel(parked.jobId);
    listed = await undeliveredIds(ledger);
    expect(listed).toContain(first.jobId);
    expect(listed).not.toContain(second.jobId);
    expect(await ledger.nextOfThread(first)).toEqual({
      jobId: first.jobId,
      deliveries: 1,
      deliveryId: first.jobId,
      graph: first.graph,
      tenant: first.tenant,
      threadId: first.threadId,
      attempt: 0,
      priority: 0,
    });
  });

  it('names the holder in get, list and the count while a job waits, and nobody once it runs', async () => {
    const { ledger } = db;
    const threadId = 'wait-visible';
    const { job: holder, token } = await jobIn(ledger, 'running', { threadId });
    const { job: waiter } = await ledger.admit({ graph: 'echo', input: {}, threadId });
    const before = await ledger.countWaitingForThread();
    expect(await ledger.get(waiter.jobId)).toMatchObject({ status: 'accepted', blockedBy: holder.jobId });
    expect((await ledger.list({ threadId })).jobs.map((j) => [j.jobId, j.blockedBy])).toEqual([
      [waiter.jobId, holder.jobId],
      [holder.jobId, null],
    ]);
    expect(await ledger.complete(holder.jobId, token, {})).toEqual({ otherJobsOnThread: true });
    expect((await ledger.get(waiter.jobId)).blockedBy).toBeNull();
    expect(await ledger.countWaitingForThread()).toBe(before - 1);
    const claim = await ledger.claim(waiter.jobId, 'w');
    if (!claim.ok) throw new Error(`claim refused: ${claim.reason}`);
    // The last job of its thread has nothing to hand on.
    expect(await ledger.fail(waiter.jobId, claim.job.fencingToken, { message: 'x' })).toEqual({ otherJobsOnThread: false });
  });
});
