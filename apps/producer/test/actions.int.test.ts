import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { deliveryId } from '@runledger/queue';
import { loadGraphs } from '@runledger/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allJobs, backends, type Harness, startHarness } from './harness';

// Operator actions on jobs driven through the ledger's worker verbs (claim, complete, park,
// requireManual), as a worker would leave them.

let h: Harness;
beforeAll(async () => {
  h = await startHarness('actions', { backend: backends()[0] });
});
afterAll(() => h?.close());

const submit = async (graph: string, input: unknown, threadId?: string): Promise<string> => {
  const r = await h.app.inject({ method: 'POST', url: '/v1/jobs', payload: { graph, input, threadId } });
  expect(r.statusCode).toBe(202);
  return r.json().jobId;
};
const act = (jobId: string, action: string, payload?: object) => h.app.inject({ method: 'POST', url: `/v1/jobs/${jobId}/${action}`, payload });

async function claimed(graph: string, input: unknown): Promise<{ jobId: string; token: number }> {
  const jobId = await submit(graph, input);
  const claim = await h.db.ledger.claim(jobId, 'test-worker');
  if (!claim.ok) throw new Error(`claim refused: ${claim.reason}`);
  return { jobId, token: claim.job.fencingToken };
}

/** A job left in manual_reconcile with one effect whose outcome is unknown. */
async function inDoubt(): Promise<string> {
  const { jobId, token } = await claimed('echo', {});
  await h.db.ledger.recordEffectIntent(jobId, token, 'book:flight', 'book_flight', `${jobId}:book:flight`);
  await h.db.ledger.requireManual(jobId, token, 'effect_in_doubt', { effect: 'book:flight' });
  return jobId;
}

async function expectInvalidState(jobId: string, action: string, payload?: object) {
  const before = await allJobs(h.db);
  const r = await act(jobId, action, payload);
  expect(r.statusCode).toBe(409);
  expect(r.json().error.code).toBe('invalid_state');
  expect(await allJobs(h.db)).toEqual(before);
}

describe('operator actions', () => {
  it('cancels an accepted job once; a second cancel is 409 invalid_state', async () => {
    const jobId = await submit('echo', {});
    const r = await act(jobId, 'cancel', { note: 'not needed' });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({ jobId, status: 'cancelled', effects: [] });
    expect(r.json().completedAt).not.toBeNull();
    await expectInvalidState(jobId, 'cancel');
  });

  it('refuses replay, resume and resolve of a completed job with 409 invalid_state', async () => {
    const { jobId, token } = await claimed('echo', {});
    await h.db.ledger.complete(jobId, token, { done: 1 });
    await expectInvalidState(jobId, 'replay');
    await expectInvalidState(jobId, 'resume', { resume: true });
    await expectInvalidState(jobId, 'resolve', { outcome: 'failed', note: 'x' });
    await expectInvalidState(jobId, 'cancel');
  });

  it('resumes an interrupted job: accepted again with the value, and delivered anew', async () => {
    const { jobId, token } = await claimed('approval', { request: 'trip' });
    await h.db.ledger.park(jobId, token, { question: 'ok?' });
    const r = await act(jobId, 'resume', { resume: { approved: true } });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({ jobId, status: 'accepted', enqueued: true, deliveries: 2, interrupt: null });
    expect((await h.db.ledger.get(jobId)).resumeValue).toEqual({ value: { approved: true } });
    const delivery = await h.queue.getJob(deliveryId(jobId, 1));
    expect(delivery?.name).toBe('approval (redelivery 1)');
    expect(delivery?.data).toMatchObject({ jobId, graph: 'approval', attempt: 0, delivery: 1 });
    const types = (await h.db.ledger.events(jobId)).map((e) => e.type);
    expect(types.slice(-2)).toEqual(['resume_requested', 'enqueued']);
    await expectInvalidState(jobId, 'resume', { resume: true });
  });

  it('shows the effect in doubt of a manual_reconcile job, then replays it and delivers it', async () => {
    const jobId = await inDoubt();
    const shown = (await h.app.inject({ method: 'GET', url: `/v1/jobs/${jobId}` })).json();
    expect(shown).toMatchObject({ status: 'manual_reconcile', inDoubt: [{ key: 'book:flight', name: 'book_flight' }] });
    expect(shown.effects).toEqual([expect.objectContaining({ key: 'book:flight', name: 'book_flight', status: 'pending', attempts: 1 })]);
    const r = await act(jobId, 'replay', { note: 'checked with the airline: no booking' });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({ status: 'accepted', enqueued: true, inDoubt: [] });
    expect(r.json().effects[0].status).toBe('failed');
    expect(await h.queue.getJob(deliveryId(jobId, 1))).toBeTruthy();
    await expectInvalidState(jobId, 'replay');
  });

  it('resolves a manual_reconcile job as completed or failed with the note', async () => {
    const done = await inDoubt();
    const r = await act(done, 'resolve', { outcome: 'completed', note: 'booked by phone' });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({ status: 'completed', result: { resolvedBy: 'operator', note: 'booked by phone' } });
    await expectInvalidState(done, 'resolve', { outcome: 'failed', note: 'again' });

    const failed = await inDoubt();
    const f = await act(failed, 'resolve', { outcome: 'failed', note: 'refunded' });
    expect(f.json()).toMatchObject({ status: 'failed', error: { code: 'resolved_failed', message: 'refunded' } });
    const last = (await h.db.ledger.events(failed)).at(-1);
    expect(last).toMatchObject({ type: 'resolved', detail: { outcome: 'failed', note: 'refunded' } });
  });

  it('shows what a waiting job waits for, and delivers it once cancel or resolve ends the job holding its thread', async () => {
    for (const action of ['cancel', 'resolve'] as const) {
      const threadId = `held-${action}-${Date.now()}`;
      const holder = await submit('echo', {}, threadId);
      const claim = await h.db.ledger.claim(holder, 'test-worker');
      if (!claim.ok) throw new Error(`claim refused: ${claim.reason}`);
      await h.db.ledger.requireManual(holder, claim.job.fencingToken, 'effect_in_doubt');
      const waiting = await submit('echo', {}, threadId);
      // A worker's claim was refused; it recorded the wait and dropped the delivery.
      expect(await h.db.ledger.claim(waiting, 'test-worker')).toMatchObject({ ok: false, reason: 'thread_busy' });
      expect(await h.db.ledger.waitForThread(waiting)).toBe(holder);
      await h.queue.remove(waiting);
      const before = await h.app.inject({ method: 'GET', url: `/v1/jobs/${waiting}` });
      expect(before.json()).toMatchObject({ status: 'accepted', blockedBy: holder });
      const events = (await h.app.inject({ method: 'GET', url: `/v1/jobs/${waiting}/events` })).json().events;
      expect(events.at(-1)).toMatchObject({ type: 'waiting_for_thread', detail: { blockedBy: holder } });
      const listed = (await h.app.inject({ method: 'GET', url: `/v1/jobs?threadId=${threadId}` })).json().jobs;
      expect(listed.map((j: { blockedBy: string | null }) => j.blockedBy)).toEqual([holder, null]);

      const r = await act(holder, action, action === 'resolve' ? { outcome: 'failed', note: 'refunded' } : { note: 'not needed' });
      expect(r.statusCode).toBe(200);
      expect(await h.queue.getJob(deliveryId(waiting, 1))).toBeTruthy();
      expect((await h.app.inject({ method: 'GET', url: `/v1/jobs/${waiting}` })).json()).toMatchObject({ status: 'accepted', blockedBy: null, deliveries: 2 });
    }
  });

  it('answers 404 for every action on an unknown job', async () => {
    for (const [action, payload] of [['cancel'], ['replay'], ['resume', { resume: 1 }], ['resolve', { outcome: 'failed', note: 'n' }]] as const) {
      const r = await act('missing-job', action, payload);
      expect([action, r.statusCode, r.json().error.code]).toEqual([action, 404, 'not_found']);
    }
  });
});

describe('thread state', () => {
  it("reads the thread's checkpoint through the graph of its latest job", async () => {
    const threadId = `approval-thread-${Date.now()}`;
    const jobId = await submit('approval', { request: 'a new laptop' }, threadId);
    // Run the graph up to its interrupt the way a worker would, with a checkpointer in the test schema.
    const saver = new PostgresSaver(h.db.ledger.pool, undefined, { schema: h.db.schema });
    const graph = (await loadGraphs()).get('approval')!.build(saver);
    await graph.invoke({ request: 'a new laptop' }, { configurable: { thread_id: threadId }, durability: 'sync' });

    const r = await h.app.inject({ method: 'GET', url: `/v1/threads/${threadId}/state` });
    expect(r.statusCode).toBe(200);
    const state = r.json();
    expect(state).toMatchObject({ threadId, jobId, graph: 'approval', values: { request: 'a new laptop' }, next: ['review'] });
    expect(state.tasks[0].interrupts[0].value.question).toContain('a new laptop');
    expect(state.checkpointId).toEqual(expect.any(String));
  });

  it('answers an empty state for a thread whose job has not run yet', async () => {
    const threadId = `fresh-thread-${Date.now()}`;
    await submit('echo', {}, threadId);
    const r = await h.app.inject({ method: 'GET', url: `/v1/threads/${threadId}/state` });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({ threadId, graph: 'echo', values: {}, next: [], tasks: [], checkpointId: null });
  });
});
