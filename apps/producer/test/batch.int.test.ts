import { deliveryId } from '@runledger/queue';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { waitFor } from '../../../test/support/db';
import { type Proc, spawnWorker, stackEnv } from '../../../test/support/stack';
import { MAX_JSON_DEPTH } from '../src/json-body';
import { admissionModes, allJobs, type Harness, startHarness } from './harness';

describe.each(admissionModes())('POST /v1/jobs/batch ($name)', ({ backend, groupCommit }) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(`batch_${backend}${groupCommit ? '_gc' : ''}`, { backend, groupCommit });
  });
  afterAll(() => h?.close());

  const batch = (jobs: unknown, headers: Record<string, string> = {}) =>
    h.app.inject({ method: 'POST', url: '/v1/jobs/batch', payload: { jobs } as object, headers });

  it('answers each job on its own, in order, and writes exactly the valid new ones', async () => {
    const tag = `${backend}${groupCommit ? '-gc' : ''}`;
    const earlier = await h.app.inject({ method: 'POST', url: '/v1/jobs', payload: { graph: 'echo', input: { steps: 1 }, idempotencyKey: `${tag}-repeat` } });
    expect(earlier.statusCode).toBe(202);
    const before = await allJobs(h.db);

    const r = await batch([
      { graph: 'echo', input: { steps: 1 }, idempotencyKey: `${tag}-new-1`, metadata: { n: 1 } },
      { graph: 'echo', input: { steps: 1 }, idempotencyKey: `${tag}-repeat` },
      { graph: 'echo', input: { steps: 9 }, idempotencyKey: `${tag}-repeat` },
      { graph: 'no-such-graph', input: {}, idempotencyKey: `${tag}-unknown` },
      { graph: 'echo', input: { steps: 'many' }, idempotencyKey: `${tag}-bad-input` },
      { graph: 'echo', tenant: 'other', input: {} },
      { graph: 'echo', input: { steps: 2 }, threadId: `${tag}-thread` },
    ]);
    expect(r.statusCode).toBe(200);
    const results = r.json().results as Array<{ status: number; body: Record<string, unknown> & { error?: { code: string; message: string } } }>;
    expect(results.map((x) => x.status)).toEqual([202, 200, 409, 422, 422, 400, 202]);
    expect(results[0]!.body).toMatchObject({ status: 'accepted', enqueued: true });
    expect(Object.keys(results[0]!.body).sort()).toEqual(['acceptedAt', 'enqueued', 'jobId', 'status', 'threadId']);
    expect(results[1]!.body.jobId).toBe(earlier.json().jobId);
    expect(results[2]!.body).toEqual({ error: { code: 'idempotency_conflict', message: expect.stringContaining(`${tag}-repeat`) } });
    expect(results[3]!.body.error?.code).toBe('unknown_graph');
    expect(results[4]!.body.error?.code).toBe('invalid_input');
    expect(results[5]!.body).toEqual({ error: { code: 'invalid_request', message: expect.stringContaining('body.jobs.5') } });
    expect(results[6]!.body).toMatchObject({ threadId: `${tag}-thread`, enqueued: true });

    // Exactly the two new jobs were written, each as POST /v1/jobs writes one, and queued.
    const created = [results[0]!.body.jobId, results[6]!.body.jobId] as string[];
    const after = await allJobs(h.db);
    expect(after.map((j) => j.jobId).sort()).toEqual([...before.map((j) => j.jobId), ...created].sort());
    expect(await h.db.ledger.get(created[0]!)).toMatchObject({ graph: 'echo', input: { steps: 1 }, metadata: { n: 1 }, deliveries: 1 });
    for (const jobId of created) {
      // The delivery carries the job id and its labels, never the input.
      const data = (await h.queue.getJob(deliveryId(jobId, 0)))?.data;
      expect(data).toMatchObject({ jobId, graph: 'echo', tenant: 'default', attempt: 0, delivery: 0 });
      expect(data).not.toHaveProperty('input');
      expect((await h.db.ledger.events(jobId)).map((e) => e.type)).toEqual(['accepted', 'enqueued']);
    }
  });

  it('answers a key repeated inside one batch as one job: the same request 200, another 409', async () => {
    const key = `in-batch-${backend}${groupCommit ? '-gc' : ''}`;
    const r = await batch([
      { graph: 'echo', input: { steps: 1 }, idempotencyKey: key },
      { graph: 'echo', input: { steps: 1 }, idempotencyKey: key },
      { graph: 'echo', input: { steps: 2 }, idempotencyKey: key },
    ]);
    const results = r.json().results as Array<{ status: number; body: { jobId?: string } }>;
    expect(results.map((x) => x.status)).toEqual([202, 200, 409]);
    expect(results[1]!.body.jobId).toBe(results[0]!.body.jobId);
  });

  it('one job with a NUL, a lone surrogate, nesting past the limit or a __proto__ field refuses only itself (400 naming it)', async () => {
    const before = await allJobs(h.db);
    let deep: unknown = 1;
    for (let i = 0; i < MAX_JSON_DEPTH + 5; i++) deep = { d: deep };
    const ok = { graph: 'echo', input: { steps: 1 } };
    const jobs = [
      ok,
      { ...ok, metadata: { note: 'a\u0000b' } },
      ok,
      { ...ok, metadata: { note: '\ud800' } },
      { ...ok, metadata: deep },
      { ...ok, metadata: { PROTO: 1 } },
      ok,
    ];
    // JSON.stringify of an object literal cannot carry a "__proto__" field: it is written into the text.
    const payload = JSON.stringify({ jobs }).replace('"PROTO"', '"__proto__"');
    const r = await h.app.inject({ method: 'POST', url: '/v1/jobs/batch', payload, headers: { 'content-type': 'application/json' } });
    expect(r.statusCode, r.body.slice(0, 300)).toBe(200);
    const results = r.json().results as Array<{ status: number; body: { jobId?: string; error?: { code: string; message: string } } }>;
    expect(results.map((x) => x.status)).toEqual([202, 400, 202, 400, 400, 400, 202]);
    const messages = results.map((x) => x.body.error?.message);
    expect(messages[1]).toBe('body.jobs[1].metadata.note contains the NUL character (\\u0000), which PostgreSQL cannot store.');
    expect(messages[3]).toMatch(/^body\.jobs\[3\]\.metadata\.note contains a lone UTF-16 surrogate/);
    expect(messages[4]).toMatch(/^body\.jobs\[4\]\.metadata\.d\.d.*nested more than 100 levels deep/);
    expect(messages[5]).toMatch(/^body\.jobs\[5\]\.metadata: the field name "__proto__" is refused/);
    const created = [0, 2, 6].map((i) => results[i]!.body.jobId as string);
    expect((await allJobs(h.db)).map((j) => j.jobId).sort()).toEqual([...before.map((j) => j.jobId), ...created].sort());
    // Outside the jobs list the body is checked as before: the whole request answers 400.
    const envelope = await h.app.inject({
      method: 'POST',
      url: '/v1/jobs/batch',
      payload: '{"jobs":[{"graph":"echo","input":{}}],"x":"\\u0000"}',
      headers: { 'content-type': 'application/json' },
    });
    expect([envelope.statusCode, envelope.json().error.message]).toEqual([400, expect.stringMatching(/^body\.x contains the NUL character/)]);
  });

  it('refuses a batch over the limit, an empty one and the Idempotency-Key header with 400, writing nothing', async () => {
    const before = await allJobs(h.db);
    const job = { graph: 'echo', input: {} };
    const tooMany = await batch(Array.from({ length: 501 }, () => job));
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.json()).toEqual({ error: { code: 'invalid_request', message: expect.stringContaining('at most 500 jobs') } });
    expect((await batch([])).json().error.code).toBe('invalid_request');
    expect((await h.app.inject({ method: 'POST', url: '/v1/jobs/batch', payload: { jobs: [job], extra: 1 } })).statusCode).toBe(400);
    const withHeader = await batch([job], { 'idempotency-key': 'k' });
    expect(withHeader.statusCode).toBe(400);
    expect(withHeader.json().error.message).toContain('its own idempotencyKey');
    expect(await allJobs(h.db)).toEqual(before);
  });

  it('admits the full 500 in one request', async () => {
    const r = await batch(Array.from({ length: 500 }, (_, i) => ({ graph: 'echo', input: { steps: 1 }, idempotencyKey: `full-${i}` })));
    expect(r.statusCode).toBe(200);
    const results = r.json().results as Array<{ status: number }>;
    expect(results).toHaveLength(500);
    expect(results.every((x) => x.status === 202)).toBe(true);
  });
});

describe('POST /v1/jobs/batch with a worker', () => {
  let h: Harness;
  let worker: Proc | undefined;
  const backend = admissionModes()[0]!.backend;
  beforeAll(async () => {
    h = await startHarness('batch_run', { backend });
  });
  afterAll(async () => {
    worker?.kill('SIGKILL');
    await worker?.exited;
    await h?.close();
  });

  it('every admitted job is delivered and runs to completed', async () => {
    const r = await h.app.inject({
      method: 'POST',
      url: '/v1/jobs/batch',
      payload: { jobs: Array.from({ length: 40 }, (_, i) => ({ graph: 'echo', input: { steps: 2 }, idempotencyKey: `run-${i}` })) },
    });
    const ids = (r.json().results as Array<{ status: number; body: { jobId: string } }>).map((x) => {
      expect(x.status).toBe(202);
      return x.body.jobId;
    });
    const q = { backend, redisUrl: inject('redisUrl') ?? undefined, databaseUrl: h.db.url, schema: h.db.schema, prefix: h.queuePrefix };
    worker = spawnWorker(stackEnv(q, h.db.url, h.db.schema, { WORKER_CONCURRENCY: '8' }), 'batch-worker');
    const done = await waitFor(
      'every batch job to complete',
      async () => {
        const jobs = await Promise.all(ids.map((id) => h.db.ledger.get(id)));
        return jobs.every((j) => j.status === 'completed') ? jobs : undefined;
      },
      60_000,
      250,
    );
    expect(done).toHaveLength(40);
  }, 90_000);
});
