import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allJobs, backends, type Harness, startHarness } from './harness';

// Group commit isolates requests that share a transaction: each one gets its own answer, and
// a statement that fails aborts the shared transaction without failing its neighbours.

let h: Harness;
beforeAll(async () => {
  h = await startHarness('group_commit', { backend: backends()[0], groupCommit: true });
});
afterAll(() => h?.close());

const post = (payload: object) => h.app.inject({ method: 'POST', url: '/v1/jobs', payload });

describe('group commit', () => {
  it('fails only the request whose row PostgreSQL refuses; the rest of the batch is admitted and delivered', async () => {
    const before = (await allJobs(h.db)).length;
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => post({ graph: 'echo', input: {}, metadata: { i, note: i === 7 ? 'bad\u0000' : 'fine' } })),
    );
    expect(answers[7]!.statusCode).toBe(400);
    expect(answers[7]!.json().error.code).toBe('invalid_request');
    const good = answers.filter((_, i) => i !== 7);
    expect(good.map((a) => a.statusCode)).toEqual(Array(19).fill(202));
    expect(good.every((a) => a.json().enqueued === true)).toBe(true);
    expect((await allJobs(h.db)).length).toBe(before + 19);
    for (const a of good) expect((await h.db.ledger.events(a.json().jobId)).map((e) => e.type)).toEqual(['accepted', 'enqueued']);
  });

  it('answers a conflicting key and a busy thread in the same batch with their own 409s', async () => {
    const threadId = `gc-thread-${Date.now()}`;
    const answers = await Promise.all([
      post({ graph: 'echo', input: { steps: 1 }, idempotencyKey: 'gc-k' }),
      post({ graph: 'echo', input: { steps: 2 }, idempotencyKey: 'gc-k' }),
      post({ graph: 'echo', input: {}, threadId, multitask: 'reject' }),
      post({ graph: 'echo', input: {}, threadId, multitask: 'reject' }),
      post({ graph: 'echo', input: {} }),
    ]);
    const codes = answers.map((a) => a.statusCode);
    expect([codes[0], codes[1], codes[4]]).toEqual([202, 409, 202]);
    expect(answers[1]!.json().error.code).toBe('idempotency_conflict');
    // The two `reject` admissions each take the thread's lock in their own transaction: either
    // may come first (arrival order is not promised under load), and exactly one gets in.
    expect([codes[2], codes[3]].sort()).toEqual([202, 409]);
    expect(answers[codes[2] === 409 ? 2 : 3]!.json().error.code).toBe('thread_busy');
    expect((await h.db.ledger.list({ threadId })).jobs).toHaveLength(1);
  });
});
