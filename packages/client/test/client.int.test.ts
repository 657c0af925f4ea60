import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allJobs, backends, CLOSED_PG_URL, type Harness, startHarness } from '../../../apps/producer/test/harness';
import { RunledgerApiError, RunledgerClient, WaitTimeoutError } from '../src/index';

// The SDK against a real producer listening on a port, with jobs driven through the ledger
// the way a worker drives them (claim, complete, park).

async function listen(h: Harness): Promise<string> {
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = h.app.server.address() as { port: number };
  return `http://127.0.0.1:${port}`;
}

let h: Harness;
let baseUrl: string;
let client: RunledgerClient;
beforeAll(async () => {
  h = await startHarness('client_sdk', { backend: backends()[0] });
  baseUrl = await listen(h);
  // A trailing slash is tolerated.
  client = new RunledgerClient({ baseUrl: `${baseUrl}/`, retryDelayMs: 10 });
});
afterAll(() => h?.close());

async function claim(jobId: string): Promise<number> {
  const c = await h.db.ledger.claim(jobId, 'sdk-test-worker');
  if (!c.ok) throw new Error(`claim refused: ${c.reason}`);
  return c.job.fencingToken;
}

describe('RunledgerClient', () => {
  it('submits, reads, lists and waits for a job a worker completes', async () => {
    const admission = await client.submit({ graph: 'echo', input: { steps: 1 }, metadata: { from: 'sdk' } });
    expect(admission).toMatchObject({ status: 'accepted', enqueued: true, created: true, idempotencyKey: expect.any(String) });
    expect((await client.get(admission.jobId)).metadata).toEqual({ from: 'sdk' });
    const listed = await client.list({ graph: 'echo', status: 'accepted', limit: 500 });
    expect(listed.jobs.map((j) => j.jobId)).toContain(admission.jobId);

    const waiting = client.wait(admission.jobId, { pollMs: 20, timeoutMs: 10_000 });
    const token = await claim(admission.jobId);
    await h.db.ledger.complete(admission.jobId, token, { echoed: true });
    const done = await waiting;
    expect(done).toMatchObject({ status: 'completed', result: { echoed: true }, attempt: 1, fencingToken: 1 });
    expect((await client.events(admission.jobId)).map((e) => e.type)).toEqual(['accepted', 'enqueued', 'claimed', 'completed']);
  });

  it('returns the same job for the same idempotency key (created: false)', async () => {
    const first = await client.submit({ graph: 'echo', input: {}, idempotencyKey: 'sdk-key-1' });
    const again = await client.submit({ graph: 'echo', input: {}, idempotencyKey: 'sdk-key-1' });
    expect(again).toMatchObject({ jobId: first.jobId, created: false, idempotencyKey: 'sdk-key-1' });
  });

  it('reuses its generated key when it retries after a lost answer: one job', async () => {
    let calls = 0;
    const losesFirstAnswer: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      calls++;
      // The server admitted the job, but the answer never reaches the caller.
      if (calls === 1) throw new TypeError('fetch failed: socket hang up');
      return response;
    };
    const flaky = new RunledgerClient({ baseUrl, fetch: losesFirstAnswer, retryDelayMs: 5 });
    const before = (await allJobs(h.db)).length;
    const admission = await flaky.submit({ graph: 'echo', input: { steps: 2 } });
    expect(calls).toBe(2);
    expect(admission.created).toBe(false);
    expect((await allJobs(h.db)).length).toBe(before + 1);
    expect((await h.db.ledger.get(admission.jobId)).idempotencyKey).toBe(admission.idempotencyKey);
  });

  it('returns a parked job from wait, and resumes it', async () => {
    const { jobId } = await client.submit({ graph: 'approval', input: { request: 'a chair' } });
    await h.db.ledger.park(jobId, await claim(jobId), { question: 'ok?' });
    expect(await client.wait(jobId, { pollMs: 20 })).toMatchObject({ status: 'interrupted', interrupt: { question: 'ok?' } });
    expect(await client.resume(jobId, { approved: true })).toMatchObject({ status: 'accepted', enqueued: true });
  });

  it('cancels, and throws RunledgerApiError with status and code', async () => {
    const { jobId } = await client.submit({ graph: 'echo', input: {} });
    expect((await client.cancel(jobId, 'changed my mind')).status).toBe('cancelled');
    await expect(client.cancel(jobId)).rejects.toMatchObject({ name: 'RunledgerApiError', status: 409, code: 'invalid_state' });
    await expect(client.replay(jobId)).rejects.toMatchObject({ status: 409, code: 'invalid_state' });
    await expect(client.resolve(jobId, 'failed', 'n')).rejects.toMatchObject({ status: 409, code: 'invalid_state' });
    await expect(client.get('nope')).rejects.toMatchObject({ status: 404, code: 'not_found' });
    const err = await client.submit({ graph: 'nope', input: {} }).catch((e) => e);
    expect(err).toBeInstanceOf(RunledgerApiError);
    expect([err.status, err.code, err.retryable]).toEqual([422, 'unknown_graph', false]);
  });

  it('gives up waiting with WaitTimeoutError naming the last status', async () => {
    const { jobId } = await client.submit({ graph: 'echo', input: {} });
    const err = await client.wait(jobId, { pollMs: 20, timeoutMs: 100 }).catch((e) => e);
    expect(err).toBeInstanceOf(WaitTimeoutError);
    expect(err).toMatchObject({ jobId, lastStatus: 'accepted' });
  });

  it('reports a network error as status 0 after its retries', async () => {
    const dead = new RunledgerClient({ baseUrl: 'http://127.0.0.1:1', retries: 2, retryDelayMs: 5 });
    await expect(dead.get('x')).rejects.toMatchObject({ status: 0, code: 'network_error' });
  });
});

describe('RunledgerClient with PostgreSQL down', () => {
  let down: Harness;
  beforeAll(async () => {
    down = await startHarness('client_pg_down', { appDatabaseUrl: CLOSED_PG_URL });
  });
  afterAll(() => down?.close());

  it('retries a 503 with the same key, then throws database_unavailable; nothing admitted', async () => {
    const seen: string[] = [];
    const recording: typeof fetch = async (input, init) => {
      seen.push(JSON.parse(String(init?.body)).idempotencyKey);
      return fetch(input, init);
    };
    const c = new RunledgerClient({ baseUrl: await listen(down), fetch: recording, retries: 2, retryDelayMs: 5 });
    await expect(c.submit({ graph: 'echo', input: {} })).rejects.toMatchObject({ status: 503, code: 'database_unavailable' });
    expect(seen).toHaveLength(3);
    expect(new Set(seen).size).toBe(1);
    expect(await allJobs(down.db)).toEqual([]);
  });
});

describe('RunledgerClient.submitMany', () => {
  it('answers each job in order, with a key for every job, and a retry of the same batch admits nothing twice', async () => {
    const requests = [
      { graph: 'echo', input: { steps: 1 } },
      { graph: 'no-such-graph', input: {} },
      { graph: 'echo', input: { steps: 2 }, idempotencyKey: 'sdk-many-1' },
    ];
    const first = await client.submitMany(requests);
    expect(first.map((r) => [r.ok, r.status])).toEqual([
      [true, 202],
      [false, 422],
      [true, 202],
    ]);
    if (!first[0]!.ok || !first[2]!.ok || first[1]!.ok) throw new Error('unexpected shape');
    expect(first[0]!.admission).toMatchObject({ status: 'accepted', created: true, idempotencyKey: expect.any(String) });
    expect(first[1]!.error.code).toBe('unknown_graph');
    expect(first[2]!.admission.idempotencyKey).toBe('sdk-many-1');

    const before = await allJobs(h.db);
    const again = await client.submitMany([{ ...requests[0]!, idempotencyKey: first[0]!.admission.idempotencyKey }, requests[2]!]);
    expect(again.map((r) => (r.ok ? [r.status, r.admission.jobId, r.admission.created] : r.status))).toEqual([
      [200, first[0]!.admission.jobId, false],
      [200, first[2]!.admission.jobId, false],
    ]);
    expect(await allJobs(h.db)).toEqual(before);
  });

  it("has the shape README's batch sample says", async () => {
    const readme = readFileSync(path.join(import.meta.dirname, '../../../README.md'), 'utf8');
    const documented = (kind: string, inner: string) =>
      new RegExp(`// \\{ ok: ${kind}, status: [^,]+, ${inner}: \\{ ([^}]+) \\} \\}`).exec(readme)?.[1]?.split(', ').sort();
    const [good, bad] = await client.submitMany([
      { graph: 'echo', input: {} },
      { graph: 'no-such-graph', input: {} },
    ]);
    expect(Object.keys(good!).sort()).toEqual(['admission', 'ok', 'status']);
    expect(Object.keys(bad!).sort()).toEqual(['error', 'ok', 'status']);
    if (!good!.ok || bad!.ok) throw new Error('unexpected answers');
    expect(documented('true', 'admission')).toEqual(Object.keys(good!.admission).sort());
    expect(documented('false', 'error')).toEqual(Object.keys(bad!.error).sort());
  });

  it('throws RunledgerApiError 400 for more than 500 jobs, writing nothing', async () => {
    const before = await allJobs(h.db);
    const err = await client.submitMany(Array.from({ length: 501 }, () => ({ graph: 'echo', input: {} }))).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RunledgerApiError);
    expect(err).toMatchObject({ status: 400, code: 'invalid_request' });
    expect(await allJobs(h.db)).toEqual(before);
  });
});
