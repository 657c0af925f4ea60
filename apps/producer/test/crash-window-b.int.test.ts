// Crash window B with real processes (ARCHITECTURE.md, Failure → behaviour): the producer is SIGKILLed after the ledger
// commit and before the queue add. The client's retry with the same key finds the same job,
// and a worker's reconciler delivers it from the ledger.
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../../../packages/ledger/src/index';
import { type TestDb, testDb, waitFor } from '../../../test/support/db';
import { processRegistry, queueConfigFor, spawnProcess, spawnWorker, stackEnv, waitForStatus } from '../../../test/support/stack';
import '../../../test/support/provided';

describe('window B: producer killed between ledger commit and queue add', () => {
  let db: TestDb;
  let env: NodeJS.ProcessEnv;
  const procs = processRegistry();
  const start = procs.add;

  beforeAll(async () => {
    db = await testDb('window_b');
    const redis = inject('redisUrl');
    const q = queueConfigFor(redis ? 'redis' : 'postgres', db.url, db.schema, redis);
    env = stackEnv(q, db.url, db.schema, { LEASE_TTL_MS: '1500', SWEEP_INTERVAL_MS: '250' });
  });
  afterEach((ctx) => procs.cleanup(ctx));
  afterAll(() => db?.close());

  async function producer(extra: Record<string, string>) {
    const port = await freePort();
    const p = start(spawnProcess('apps/producer/src/main.ts', { ...env, PORT: String(port), ...extra }));
    const base = `http://127.0.0.1:${port}`;
    await waitFor(
      'the producer to answer',
      () =>
        fetch(`${base}/healthz`).then(
          (r) => r.ok,
          () => false,
        ),
      30_000,
      100,
    );
    return { p, base };
  }

  const submit = (base: string) =>
    fetch(`${base}/v1/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'window-b-1' },
      body: JSON.stringify({ graph: 'echo', input: { steps: 2 } }),
    });

  it('the admission survives, the retry finds the same job, the reconciler delivers it', async () => {
    const first = await producer({ RUNLEDGER_TEST_CRASH_AT: 'after_admit_commit' });
    await expect(submit(first.base)).rejects.toThrow(); // no answer: the process died mid-request
    await first.p.exited;
    const [job] = (await db.ledger.list({})).jobs;
    if (!job) throw new Error('the committed admission is missing');
    // The admission issued its first delivery; the queue never got it, so no `enqueued` event.
    expect(job).toMatchObject({ status: 'accepted', deliveries: 1, deliveryId: job.jobId, idempotencyKey: 'window-b-1' });
    expect((await db.ledger.events(job.jobId)).map((e) => e.type)).toEqual(['accepted']);

    const second = await producer({});
    const retry = await submit(second.base);
    expect(retry.status).toBe(200);
    // The retry names the same job and says truthfully that it is not in the queue.
    expect(await retry.json()).toMatchObject({ jobId: job.jobId, enqueued: false });

    start(spawnWorker(env, 'reconciling-worker'));
    const done = await waitForStatus(db.ledger, job.jobId, ['completed', 'failed'], 40_000);
    expect(done.status).toBe('completed');
    expect((await db.ledger.list({})).jobs).toHaveLength(1);
    // Exactly one delivery queued: the reconciler's, the next after the one the admission issued.
    const enqueued = (await db.ledger.events(job.jobId)).filter((e) => e.type === 'enqueued');
    expect(enqueued.map((e) => e.detail.deliveryId)).toEqual([`${job.jobId}-d1`]);
  });
});
