// Webhooks end to end with real processes: a producer (main.ts) and workers, a receiver on this
// machine that checks each signature and drops repeats by webhook-id. Each run end is accepted
// exactly once: with the receiver down for a while, with a worker SIGKILLed mid-run, and with the
// producer SIGKILLed between the receiver's answer and its record (it sends again, same id).
import { Client } from '@langchain/langgraph-sdk';
import { freePort } from '@runledger/ledger';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { type TestDb, testDb, waitFor } from '../../../test/support/db';
import { type Proc, processRegistry, queueConfigFor, spawnProcess, spawnWorker, stackEnv, waitForStatus } from '../../../test/support/stack';
import '../../../test/support/provided';
import { WebhookReceiver } from './webhook-receiver';

const KEY = 'acme-key-0123456789abcdef01';
const auth = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };

describe('webhooks: one accepted, signed delivery per run end', () => {
  let db: TestDb;
  let env: NodeJS.ProcessEnv;
  let receiver: WebhookReceiver;
  let hook: string;
  const procs = processRegistry();

  const producer = async (): Promise<{ p: Proc; url: string }> => {
    const port = await freePort();
    const p = procs.add(spawnProcess('apps/producer/src/main.ts', { ...env, PORT: String(port) }));
    const url = `http://127.0.0.1:${port}`;
    await waitFor('a producer to answer /healthz', async () => (await fetch(`${url}/healthz`).catch(() => undefined))?.ok, 120_000, 100);
    // The receiver checks signatures with the tenant's secret, as the server hands it out.
    const secret = (await (await fetch(`${url}/v1/webhooks/secret`, { headers: auth })).json()) as { tenant: string; secret: string };
    expect(secret.tenant).toBe('acme');
    receiver.secret = secret.secret;
    return { p, url };
  };
  const submit = async (url: string, body: Record<string, unknown>) => {
    const res = await fetch(`${url}/v1/jobs`, { method: 'POST', headers: auth, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const jobOf = async (url: string, jobId: string) => (await (await fetch(`${url}/v1/jobs/${jobId}`, { headers: auth })).json()) as Record<string, unknown>;
  type DeliveryView = { state: string; runStatus: string; attempts: Array<{ statusCode: number | null; error: string | null }> };
  const deliveries = async (url: string, jobId: string): Promise<DeliveryView[]> => {
    const job = await jobOf(url, jobId);
    if (!job.webhook) throw new Error(`job ${jobId} shows no webhook: ${JSON.stringify(job)}`);
    return (job.webhook as { deliveries: DeliveryView[] }).deliveries;
  };

  beforeAll(async () => {
    db = await testDb('webhooks');
    const backend = inject('redisUrl') ? 'redis' : 'postgres';
    env = stackEnv(queueConfigFor(backend, db.url, db.schema, inject('redisUrl')), db.url, db.schema, {
      HOST: '127.0.0.1',
      RUNLEDGER_API_KEYS: `acme:${KEY}`,
      RATE_LIMIT_PER_SECOND: '1000',
      LEASE_TTL_MS: '1500',
      SWEEP_INTERVAL_MS: '250',
      // The receiver runs on this machine: loopback is allowed because it is listed exactly.
      WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
      WEBHOOK_SIGNING_KEY: 'test-signing-key-0123456789abcdef0123',
      WEBHOOK_TICK_MS: '100',
      WEBHOOK_TIMEOUT_MS: '1000',
      WEBHOOK_BACKOFF_MS: '100',
      WEBHOOK_BACKOFF_MAX_MS: '400',
    });
    receiver = new WebhookReceiver();
    hook = `${await receiver.listen()}/hook`;
  });
  afterEach((ctx) => procs.cleanup(ctx));
  afterAll(async () => {
    await receiver?.close();
    await db?.close();
  });

  it('delivers each end of a LangGraph run (interrupted, then success) and of /v1 jobs (error, cancelled) once, signed; none for a run that has not ended', async () => {
    procs.add(spawnWorker(env, 'wh-w1'));
    const { url } = await producer();
    // Admitted first and never due while the test runs: it must get nothing.
    const waiting = await submit(url, { graph: 'echo', input: {}, delayMs: 3_600_000, webhook: hook });
    expect(waiting.status).toBe(202);

    const client = new Client({ apiUrl: url, apiKey: KEY, callerOptions: { maxRetries: 0 } });
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'approval', { input: { request: 'a trip' }, webhook: hook });
    await waitForStatus(db.ledger, run.run_id, ['interrupted']);
    await waitFor('the interrupted end delivered', async () => receiver.accepted(run.run_id).length === 1);
    await client.runs.create(thread.thread_id, 'approval', { command: { resume: { approved: true } } });
    await waitFor('the success end delivered', async () => receiver.accepted(run.run_id).length === 2);

    const failing = await submit(url, { graph: 'echo', input: { failTimes: 5 }, maxAttempts: 1, webhook: hook });
    const cancelled = await submit(url, { graph: 'echo', input: {}, delayMs: 3_600_000, webhook: hook });
    const cancel = await fetch(`${url}/v1/jobs/${cancelled.body.jobId}/cancel`, { method: 'POST', headers: auth, body: '{}' });
    expect(cancel.status).toBe(200);
    await waitFor(
      'the error and cancel ends delivered',
      async () => receiver.accepted(String(failing.body.jobId)).length + receiver.accepted(String(cancelled.body.jobId)).length === 2,
    );

    const ends = receiver.accepted(run.run_id);
    expect(ends.map((p) => p.body.status)).toEqual(['interrupted', 'success']);
    expect(ends[1]?.body).toMatchObject({ run_id: run.run_id, thread_id: thread.thread_id, values: { outcome: 'a trip: approved' } });
    expect(new Set(ends.map((p) => p.id)).size).toBe(2);
    expect(receiver.accepted(String(failing.body.jobId)).map((p) => p.body)).toMatchObject([
      { status: 'error', error: expect.stringContaining('planned failure') },
    ]);
    expect(receiver.accepted(String(cancelled.body.jobId)).map((p) => p.body.status)).toEqual(['interrupted']);
    // Every POST was signed with the tenant's secret, and none came twice.
    expect(receiver.posts.every((p) => p.signed && p.accepted)).toBe(true);
    // Visible on the job: each delivery with its attempt and answer.
    expect(await deliveries(url, run.run_id)).toMatchObject([
      { runStatus: 'interrupted', state: 'delivered', attempts: [{ statusCode: 200, error: null }] },
      { runStatus: 'completed', state: 'delivered', attempts: [{ statusCode: 200, error: null }] },
    ]);
    // The run that has not ended: the others were delivered after it was admitted, it got nothing.
    expect(receiver.of(String(waiting.body.jobId))).toEqual([]);
    expect(await deliveries(url, String(waiting.body.jobId))).toEqual([]);
    expect((await jobOf(url, String(waiting.body.jobId))).webhook).toEqual({ deliveries: [] });
  }, 180_000);

  it('retries while the receiver is down and delivers once it is up', async () => {
    procs.add(spawnWorker(env, 'wh-w2'));
    const { url } = await producer();
    const port = await freePort();
    const later = new WebhookReceiver();
    later.secret = receiver.secret;
    const { body } = await submit(url, { graph: 'echo', input: {}, webhook: `http://127.0.0.1:${port}/hook` });
    const jobId = String(body.jobId);
    await waitFor('two failed attempts', async () => ((await deliveries(url, jobId))[0]?.attempts.length ?? 0) >= 2);
    await later.listen(port);
    try {
      await waitFor('the delivery', async () => (await deliveries(url, jobId))[0]?.state === 'delivered');
      expect(later.accepted(jobId)).toHaveLength(1);
      expect(later.of(jobId)).toHaveLength(1);
      const [d] = await deliveries(url, jobId);
      expect(d?.attempts.slice(0, -1).every((a) => a.statusCode === null && a.error !== null)).toBe(true);
      expect(d?.attempts.at(-1)).toMatchObject({ statusCode: 200, error: null });
    } finally {
      await later.close();
    }
  }, 180_000);

  it('a worker SIGKILLed mid-run and the producer SIGKILLed between the answer and its record: still one accepted delivery', async () => {
    const first = procs.add(spawnWorker(env, 'wh-w3'));
    const p1 = await producer();
    const { body } = await submit(p1.url, { graph: 'echo', input: { steps: 3, sleepMs: 400 }, webhook: hook });
    const jobId = String(body.jobId);
    await waitForStatus(db.ledger, jobId, ['running']);
    first.kill('SIGKILL');
    await first.exited;
    procs.add(spawnWorker(env, 'wh-w4'));
    // The first POST is accepted by the receiver; its sender dies before it can record that.
    receiver.hold = async (post) => {
      if (post.body.run_id !== jobId) return;
      p1.p.kill('SIGKILL');
      await p1.p.exited;
    };
    try {
      await waitFor('the first POST', async () => receiver.accepted(jobId).length === 1, 60_000);
    } finally {
      receiver.hold = undefined;
    }
    const p2 = await producer();
    await waitFor('the delivery recorded by the second producer', async () => (await deliveries(p2.url, jobId))[0]?.state === 'delivered', 60_000);
    expect((await db.ledger.get(jobId)).attempt).toBe(2);
    expect(receiver.accepted(jobId)).toHaveLength(1);
    // Sent again after the killed producer's claim ran out, with the same id: dropped as a repeat.
    const posts = receiver.of(jobId);
    expect(posts.length).toBeGreaterThanOrEqual(2);
    expect(new Set(posts.map((p) => p.id)).size).toBe(1);
    expect(posts.every((p) => p.signed)).toBe(true);
    expect(await deliveries(p2.url, jobId)).toHaveLength(1);
  }, 240_000);

  it('refuses a destination that is not allowed with 422 naming webhook, and stores nothing', async () => {
    const { url } = await producer();
    const count = async () => Number((await db.ledger.pool.query('SELECT count(*) AS n FROM jobs')).rows[0]?.n);
    const before = await count();
    for (const webhook of ['https://elsewhere.example.com/hook', 'http://localhost:9/hook', 'http://10.0.0.7/hook', 'ftp://127.0.0.1/x', 'not a url']) {
      const res = await submit(url, { graph: 'echo', input: {}, webhook });
      expect(res.status).toBe(422);
      expect(res.body).toMatchObject({ error: { code: 'invalid_webhook', message: expect.stringContaining('webhook') } });
    }
    const client = new Client({ apiUrl: url, apiKey: KEY, callerOptions: { maxRetries: 0 } });
    await expect(client.runs.create(null, 'echo', { input: {}, webhook: 'http://192.168.1.5/hook' })).rejects.toThrow(/422/);
    expect(await count()).toBe(before);
  });
});
