// Runs a real producer and a real worker process with distinctive secrets and payloads, drives a
// full session over HTTP (failed and successful authentication, a tenant probing another's job,
// admissions, an approval with a resume, a booking job with effects, chat runs and a state update
// whose messages LangChain cannot coerce, the admin login, oversized
// and malformed bodies, keys sent in every place a client might put them), then scans everything
// both processes wrote for those strings.
import { randomBytes } from 'node:crypto';
import { Client } from '@langchain/langgraph-sdk';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../packages/ledger/src/index';
import { type TestDb, testDb, waitFor } from './support/db';
import './support/provided';
import { rawExchange } from './support/raw-http';
import { type Proc, queueConfigFor, spawnProcess, spawnWorker, stackEnv } from './support/stack';

const tag = () => randomBytes(8).toString('hex');
const SECRETS = {
  acmeKey: `acme-${tag()}${tag()}`,
  globexKey: `globex-${tag()}${tag()}`,
  adminKey: `admin-${tag()}${tag()}`,
  wrongKey: `wrong-${tag()}${tag()}`,
  encryptionKey: randomBytes(32).toString('base64'),
  dbPassword: `pw-${tag()}`,
  inputPayload: `INPUT-${tag()}`,
  metadataPayload: `META-${tag()}`,
  resumePayload: `RESUME-${tag()}`,
  oversizedPayload: `BIG-${tag()}`,
  malformedPayload: `BROKEN-${tag()}`,
  /** The content of a chat message LangChain cannot coerce (its errors quote the value). */
  uncoerciblePayload: `UNCOERCIBLE-${tag()}`,
  uncoercibleStatePayload: `UNCOERCIBLE-STATE-${tag()}`,
  /** A key nobody configured, sent in a query string: only the log's allow-lists keep it out. */
  strayQueryKey: `stray-${tag()}${tag()}`,
  /** `Authorization: Basic` of user:acmeKey, as a client sends credentials written into a URL. */
  basicAuth: '',
  /** The admin session cookie, known once the session logged in. */
  session: '',
};

let db: TestDb;
let producer: Proc;
let worker: Proc;
let base: string;
let logs = '';

/** The test database's URL with a password (ignored by trust authentication, still a secret to keep out of logs). */
function withPassword(url: string): string {
  const u = new URL(url);
  if (!u.password) u.password = SECRETS.dbPassword;
  else SECRETS.dbPassword = decodeURIComponent(u.password);
  return u.toString();
}

/** Sends `text` as a raw request (fetch refuses URLs with credentials) and waits for the connection to close. */
const rawRequest = (text: string) => rawExchange(Number(new URL(base).port), text);

/** Requests that carry keys everywhere but in Authorization: Bearer (query, other headers, cookies, URL credentials). */
async function sendKeysEveryWay(jobId: string): Promise<void> {
  const { acmeKey, adminKey, wrongKey, strayQueryKey } = SECRETS;
  const statuses = [
    (await call(`/v1/jobs?api_key=${acmeKey}&apiKey=${adminKey}`)).status,
    (await call(`/v1/jobs?token=${wrongKey}&access_token=${strayQueryKey}&graph=echo`)).status,
    (await call(`/v1/jobs/${jobId}?key=${adminKey}`, { key: SECRETS.acmeKey })).status,
    (await call('/v1/jobs', { headers: { 'x-api-key': acmeKey } })).status,
    (await call('/v1/jobs', { headers: { 'x-api-key': strayQueryKey } })).status,
    (await call('/v1/jobs', { headers: { 'proxy-authorization': `Bearer ${adminKey}`, 'x-auth-token': adminKey } })).status,
    (await call('/v1/jobs', { headers: { cookie: `token=${acmeKey}; rl_admin=${adminKey}` } })).status,
    (await call('/admin/queues', { headers: { 'x-api-key': adminKey } })).status,
  ];
  expect(statuses.filter((s) => s >= 500)).toEqual([]);
  SECRETS.basicAuth = Buffer.from(`u:${acmeKey}`).toString('base64');
  const raw = await rawRequest(
    `GET http://u:${acmeKey}@127.0.0.1/v1/jobs?api_key=${acmeKey} HTTP/1.1\r\nHost: x\r\nAuthorization: Basic ${SECRETS.basicAuth}\r\nConnection: close\r\n\r\n`,
  );
  expect(raw).toMatch(/^HTTP\/1\.1 401 /);
  // Headers too large: answered by the client-error handler, which must not log the raw request.
  expect(await rawRequest(`GET /v1/jobs?api_key=${acmeKey}&pad=${'x'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${adminKey}\r\n\r\n`)).toMatch(
    /^HTTP\/1\.1 431 /,
  );
}

const call = (path: string, init: RequestInit & { key?: string } = {}) => {
  const headers = new Headers(init.headers);
  if (init.key) headers.set('authorization', `Bearer ${init.key}`);
  if (typeof init.body === 'string' && !headers.has('content-type')) headers.set('content-type', 'application/json');
  return fetch(`${base}${path}`, { ...init, headers, redirect: 'manual' });
};

beforeAll(async () => {
  db = await testDb('log_scan');
  const backend = inject('redisUrl') ? 'redis' : 'postgres';
  const q = queueConfigFor(backend, db.url, db.schema, inject('redisUrl'));
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const env = stackEnv(q, withPassword(db.url), db.schema, {
    PORT: String(port),
    HOST: '127.0.0.1',
    RUNLEDGER_API_KEYS: `acme:${SECRETS.acmeKey},globex:${SECRETS.globexKey}`,
    RUNLEDGER_ADMIN_KEY: SECRETS.adminKey,
    RUNLEDGER_ENCRYPTION_KEY: `k1:${SECRETS.encryptionKey}`,
    BODY_LIMIT_BYTES: '4096',
  });
  producer = spawnProcess('apps/producer/src/main.ts', { ...env, LOG_LEVEL: 'trace' });
  worker = spawnWorker({ ...env, LOG_LEVEL: 'debug' }, 'log-scan-worker');
  await waitFor('the producer to listen', async () => (await call('/healthz').catch(() => undefined))?.ok, 110_000).catch((err: Error) => {
    throw new Error(`${err.message}\n${producer.output()}`);
  });
});

afterAll(async () => {
  for (const p of [producer, worker]) p?.kill('SIGTERM');
  await Promise.all([producer?.exited, worker?.exited]);
  await db?.close();
});

async function waitForStatus(jobId: string, statuses: string[]) {
  return waitFor(`job ${jobId} in ${statuses.join('|')}`, async () => {
    const job = (await (await call(`/v1/jobs/${jobId}`, { key: SECRETS.acmeKey })).json()) as { status: string };
    return statuses.includes(job.status) ? job : undefined;
  }).catch((err: Error) => {
    throw new Error(`${err.message}\nworker:\n${worker.output()}`);
  });
}

describe('logs of a full session', () => {
  it('runs the session', async () => {
    const submission = JSON.stringify({ graph: 'approval', input: { request: SECRETS.inputPayload }, metadata: { note: SECRETS.metadataPayload } });
    expect((await call('/v1/jobs', { method: 'POST', body: submission })).status).toBe(401);
    expect((await call('/v1/jobs', { method: 'POST', body: submission, key: SECRETS.wrongKey })).status).toBe(401);
    const admitted = await call('/v1/jobs', { method: 'POST', body: submission, key: SECRETS.acmeKey, headers: { 'idempotency-key': `idem-${tag()}` } });
    expect(admitted.status).toBe(202);
    const { jobId } = (await admitted.json()) as { jobId: string };
    expect((await call(`/v1/jobs/${jobId}`, { key: SECRETS.globexKey })).status).toBe(404);

    await waitForStatus(jobId, ['interrupted']);
    const resume = JSON.stringify({ resume: { approved: true, comment: SECRETS.resumePayload } });
    expect((await call(`/v1/jobs/${jobId}/resume`, { method: 'POST', body: resume, key: SECRETS.acmeKey })).status).toBe(200);
    const done = await waitForStatus(jobId, ['completed']);
    // The payload really flowed through both processes: the API gives it back.
    expect(JSON.stringify(done)).toContain(SECRETS.inputPayload);

    const vacation = (await (
      await call('/v1/jobs', { method: 'POST', body: JSON.stringify({ graph: 'vacation', input: {} }), key: SECRETS.acmeKey })
    ).json()) as {
      jobId: string;
    };
    expect((await waitForStatus(vacation.jobId, ['completed', 'failed'])).status).toBe('completed');

    // Messages LangChain cannot coerce: refused at admission on both APIs (422 naming the field); a
    // state update with one is refused too, whatever its status; the content reaches no log.
    const uncoercible = (content: string) => ({
      messages: [
        { role: 'user', content: 'fine' },
        { role: 'bogus', content },
      ],
    });
    const chat = JSON.stringify({ graph: 'chat', input: uncoercible(SECRETS.uncoerciblePayload) });
    const refused = await call('/v1/jobs', { method: 'POST', body: chat, key: SECRETS.acmeKey });
    expect(refused.status).toBe(422);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(/^chat input: messages\.1: not a message LangChain can read/);
    const sdk = new Client({ apiUrl: base, apiKey: SECRETS.acmeKey, callerOptions: { maxRetries: 0 } });
    const thread = await sdk.threads.create();
    // A run gives the thread its graph, which the state update then goes through.
    expect(await sdk.runs.wait(thread.thread_id, 'chat', { input: { messages: 'hello' } })).toMatchObject({ messages: [{}, {}] });
    await expect(sdk.runs.create(thread.thread_id, 'chat', { input: uncoercible(SECRETS.uncoerciblePayload) })).rejects.toThrow(/422/);
    await expect(sdk.runs.wait(null, 'chat', { input: uncoercible(SECRETS.uncoerciblePayload) })).rejects.toThrow(/422/);
    await expect(sdk.threads.updateState(thread.thread_id, { values: uncoercible(SECRETS.uncoercibleStatePayload) })).rejects.toThrow(/HTTP (500|422)/);
    expect(((await (await call('/v1/jobs?graph=chat', { key: SECRETS.acmeKey })).json()) as { jobs: unknown[] }).jobs).toHaveLength(1);

    const big = JSON.stringify({ graph: 'approval', input: { request: SECRETS.oversizedPayload.repeat(400) } });
    expect((await call('/v1/jobs', { method: 'POST', body: big, key: SECRETS.acmeKey })).status).toBe(413);
    expect((await call('/v1/jobs', { method: 'POST', body: `{"graph": "${SECRETS.malformedPayload}`, key: SECRETS.acmeKey })).status).toBe(400);

    const form = await call('/admin/login');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1] as string;
    const login = await call('/admin/login', {
      method: 'POST',
      body: new URLSearchParams({ key: SECRETS.adminKey, _csrf: csrf }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `rl_csrf=${encodeURIComponent(csrf)}` },
    });
    expect(login.status).toBe(303);
    const session = /rl_admin=([^;]+)/.exec(login.headers.getSetCookie().join('\n'))?.[1] as string;
    expect((await call('/admin/queues', { headers: { cookie: `rl_admin=${session}` } })).status).toBe(200);
    expect((await call('/admin/queues', { key: SECRETS.acmeKey })).status).toBe(403);
    expect((await call(`/v1/jobs/${jobId}`, { key: SECRETS.adminKey })).status).toBe(200);
    await sendKeysEveryWay(jobId);

    for (const p of [producer, worker]) p.kill('SIGTERM');
    await Promise.all([producer.exited, worker.exited]);
    logs = `${producer.output()}\n${worker.output()}`;
    // The scan reads real logs: request lines with the job ids, and the worker's decisions.
    expect(producer.output()).toContain(`/v1/jobs/${jobId}`);
    expect(producer.output()).toContain('"statusCode":401');
    // The request lines are there, with the allowed query filter and the key-bearing parameters masked.
    expect(producer.output()).toContain('api_key=[redacted]');
    expect(producer.output()).toContain('graph=echo');
    expect(worker.output()).toContain(jobId);
    expect(worker.output()).toContain('worker started');
    SECRETS.session = decodeURIComponent(session);
  });

  it.each(Object.keys(SECRETS))('never shows %s', (name) => {
    expect(logs.length).toBeGreaterThan(1_000);
    const value = SECRETS[name as keyof typeof SECRETS];
    expect(value.length).toBeGreaterThan(8);
    expect(logs.includes(value), `${name} found in the logs`).toBe(false);
  });
});
