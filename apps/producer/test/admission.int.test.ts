import { deliveryId } from '@runledger/queue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admissionModes, allJobs, type Harness, startHarness } from './harness';

describe.each(admissionModes())('admission ($name)', ({ backend, groupCommit }) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(`admission_${backend}${groupCommit ? '_gc' : ''}`, { backend, groupCommit });
  });
  afterAll(() => h?.close());

  const post = (payload: unknown, headers: Record<string, string> = {}) =>
    h.app.inject({ method: 'POST', url: '/v1/jobs', payload: payload as object, headers });

  it('commits the ledger row, then queues a delivery carrying the job id and its labels, never the input', async () => {
    const r = await post({ graph: 'echo', input: { steps: 1 }, metadata: { origin: 'test' } });
    expect(r.statusCode).toBe(202);
    const body = r.json();
    expect(Object.keys(body).sort()).toEqual(['acceptedAt', 'enqueued', 'jobId', 'status', 'threadId']);
    expect(body).toMatchObject({ status: 'accepted', enqueued: true, threadId: body.jobId });
    const job = await h.db.ledger.get(body.jobId);
    expect(job).toMatchObject({ graph: 'echo', input: { steps: 1 }, metadata: { origin: 'test' }, deliveries: 1, deliveryId: body.jobId });
    expect(job.enqueuedAt).not.toBeNull();
    const delivery = await h.queue.getJob(deliveryId(body.jobId, 0));
    expect(delivery?.name).toBe('echo');
    expect(delivery?.data).toEqual({ jobId: body.jobId, graph: 'echo', threadId: body.jobId, tenant: job.tenant, attempt: 0, delivery: 0 });
    expect((await h.db.ledger.events(body.jobId)).map((e) => e.type)).toEqual(['accepted', 'enqueued']);
  });

  it('keeps a given threadId and the options in the ledger row', async () => {
    const r = await post({ graph: 'echo', input: {}, threadId: `thread-${backend}`, maxAttempts: 5, timeoutMs: 30_000 });
    expect(r.statusCode).toBe(202);
    expect(r.json().threadId).toBe(`thread-${backend}`);
    expect(await h.db.ledger.get(r.json().jobId)).toMatchObject({ threadId: `thread-${backend}`, maxAttempts: 5, timeoutMs: 30_000 });
  });

  it('answers the same key and body with 200 and the same job, another body with 409', async () => {
    const key = `key-${backend}-1`;
    const first = await post({ graph: 'echo', input: { steps: 2 }, idempotencyKey: key });
    expect(first.statusCode).toBe(202);
    const again = await post({ graph: 'echo', input: { steps: 2 }, idempotencyKey: key });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({ jobId: first.json().jobId, enqueued: true });
    const before = await allJobs(h.db);
    const other = await post({ graph: 'echo', input: { steps: 3 }, idempotencyKey: key });
    expect(other.statusCode).toBe(409);
    expect(other.json()).toEqual({ error: { code: 'idempotency_conflict', message: expect.stringContaining(key) } });
    expect(await allJobs(h.db)).toEqual(before);
  });

  it('answers a repeat of a job waiting for its thread as enqueued: it needs no delivery until its turn', async () => {
    const threadId = `repeat-wait-${backend}${groupCommit ? '-gc' : ''}`;
    const holder = (await post({ graph: 'approval', input: { request: 'x' }, threadId })).json().jobId;
    const claim = await h.db.ledger.claim(holder, 'test-worker');
    if (!claim.ok) throw new Error(`claim refused: ${claim.reason}`);
    await h.db.ledger.park(holder, claim.job.fencingToken, [{ question: 'approve?' }]);
    const request = { graph: 'echo', input: {}, threadId, idempotencyKey: `${threadId}-key` };
    const waiting = (await post(request)).json().jobId;
    // A worker's claim was refused: it recorded the wait and dropped the delivery.
    expect(await h.db.ledger.claim(waiting, 'test-worker')).toMatchObject({ ok: false, reason: 'thread_busy' });
    expect(await h.db.ledger.waitForThread(waiting)).toBe(holder);
    await h.queue.remove(waiting);
    const again = await post(request);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({ jobId: waiting, enqueued: true });
  });

  it('takes the key from the Idempotency-Key header too', async () => {
    const headers = { 'idempotency-key': `key-${backend}-header` };
    const first = await post({ graph: 'echo', input: {} }, headers);
    const again = await post({ graph: 'echo', input: {}, idempotencyKey: `key-${backend}-header` });
    expect([first.statusCode, again.statusCode]).toEqual([202, 200]);
    expect(again.json().jobId).toBe(first.json().jobId);
    expect((await h.db.ledger.get(first.json().jobId)).idempotencyKey).toBe(`key-${backend}-header`);
  });

  it('turns 50 concurrent identical submissions into exactly one job', async () => {
    const before = (await allJobs(h.db)).length;
    const payload = { graph: 'echo', input: { steps: 1 }, idempotencyKey: `key-${backend}-burst` };
    const answers = await Promise.all(Array.from({ length: 50 }, () => post(payload)));
    const statuses = answers.map((a) => a.statusCode).sort();
    expect(statuses.filter((s) => s === 202)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(49);
    expect(new Set(answers.map((a) => a.json().jobId)).size).toBe(1);
    expect((await allJobs(h.db)).length).toBe(before + 1);
  });

  it('refuses multitask "reject" on a thread with an unfinished job (409 thread_busy), admits "enqueue"', async () => {
    const threadId = `busy-${backend}`;
    expect((await post({ graph: 'echo', input: {}, threadId })).statusCode).toBe(202);
    const before = await allJobs(h.db);
    const rejected = await post({ graph: 'echo', input: {}, threadId, multitask: 'reject' });
    expect(rejected.statusCode).toBe(409);
    expect(rejected.json().error.code).toBe('thread_busy');
    expect(await allJobs(h.db)).toEqual(before);
    expect((await post({ graph: 'echo', input: {}, threadId, multitask: 'enqueue' })).statusCode).toBe(202);
  });

  it('lists jobs newest first with filters and a cursor', async () => {
    const threadId = `list-${backend}`;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await post({ graph: 'echo', input: { steps: i + 1 }, threadId })).json().jobId);
    const page1 = (await h.app.inject({ method: 'GET', url: `/v1/jobs?threadId=${threadId}&limit=2` })).json();
    expect(page1.jobs.map((j: { jobId: string }) => j.jobId)).toEqual([ids[2], ids[1]]);
    expect(page1.nextCursor).toEqual(expect.any(String));
    const page2 = (await h.app.inject({ method: 'GET', url: `/v1/jobs?threadId=${threadId}&limit=2&cursor=${page1.nextCursor}` })).json();
    expect(page2).toEqual({ jobs: [expect.objectContaining({ jobId: ids[0], status: 'accepted', graph: 'echo' })], nextCursor: null });
    const none = (await h.app.inject({ method: 'GET', url: `/v1/jobs?threadId=${threadId}&status=completed` })).json();
    expect(none).toEqual({ jobs: [], nextCursor: null });
  });

  it('shows a job and its timeline, and answers 404 for an unknown one', async () => {
    const { jobId } = (await post({ graph: 'echo', input: {} })).json();
    const job = (await h.app.inject({ method: 'GET', url: `/v1/jobs/${jobId}` })).json();
    expect(job).toMatchObject({ jobId, status: 'accepted', attempt: 0, fencingToken: 0, leaseOwner: null, effects: [], inDoubt: [] });
    const events = (await h.app.inject({ method: 'GET', url: `/v1/jobs/${jobId}/events` })).json().events;
    expect(events.map((e: { type: string }) => e.type)).toEqual(['accepted', 'enqueued']);
    expect(Object.keys(events[0]).sort()).toEqual(['at', 'attempt', 'detail', 'fencingToken', 'type', 'workerId']);
    for (const url of ['/v1/jobs/no-such-job', '/v1/jobs/no-such-job/events']) {
      const r = await h.app.inject({ method: 'GET', url });
      expect(r.statusCode).toBe(404);
      expect(r.json()).toEqual({ error: { code: 'not_found', message: 'Job no-such-job not found.' } });
    }
  });
});
