// GET /info and GET /ok as LangGraph's server answers them, and the test hook POST /internal/truncate:
// present only with RUNLEDGER_TEST_HOOKS (testHooks), scoped to the caller's tenant.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { langGraphThreadId } from '@runledger/ledger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, type LangGraphStack, startLangGraphStack } from './langgraph-stack';

let s: LangGraphStack;
let plainUrl: string;
beforeAll(async () => {
  s = await startLangGraphStack('lg_meta', { testHooks: true });
  // The same database behind a producer without the flag.
  ({ url: plainUrl } = await s.producer({ security: { apiKeys: [{ tenant: 'acme', key: KEYS.acme }] } }));
});
afterAll(() => s?.close());

const call = (base: string, path: string, key: string | undefined, body?: unknown) =>
  fetch(`${base}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { ...(key ? { 'x-api-key': key } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

describe('GET /info and GET /ok', () => {
  it('/info describes the server as LangGraph does; /ok answers without a key', async () => {
    const res = await call(s.url, '/info', KEYS.acme);
    expect(res.status).toBe(200);
    const langgraph = JSON.parse(readFileSync(createRequire(import.meta.url).resolve('@langchain/langgraph/package.json'), 'utf8')).version;
    expect(await res.json()).toEqual({
      version: '0.1.0',
      langgraph_js_version: langgraph,
      context: 'js',
      flags: { assistants: true, crons: true, langsmith: false, langsmith_tracing_replicas: true },
    });
    expect((await call(s.url, '/info', undefined)).status).toBe(401);
    const ok = await call(s.url, '/ok', undefined);
    expect([ok.status, await ok.json()]).toEqual([200, { ok: true }]);
  });
});

describe('POST /internal/truncate', () => {
  /** A tenant's stored assistant, a thread with a checkpoint (a state update), and a run (admitted; no worker runs here). */
  async function populate(key: string) {
    const c = s.client(key);
    await c.assistants.create({ graphId: 'chat', name: 'mine' });
    const thread = await c.threads.create({ graphId: 'chat' });
    await c.threads.updateState(thread.thread_id, { values: { messages: [{ type: 'human', content: 'hi' }] } });
    const other = await c.threads.create();
    await c.runs.create(other.thread_id, 'chat', { input: { messages: 'queued' } });
    await c.store.putItem(['memories'], 'k', { v: 1 });
    return thread.thread_id;
  }
  const checkpoints = async (tenant: string, threadId: string) =>
    Number((await s.db.ledger.pool.query('SELECT count(*) AS n FROM checkpoints WHERE thread_id = $1', [langGraphThreadId(tenant, threadId)])).rows[0].n);
  const holdings = async (tenant: string, key: string, threadId: string) => {
    const c = s.client(key);
    return {
      assistants: await c.assistants.count({ metadata: {} }),
      threads: (await c.threads.search({ limit: 100 })).length,
      jobs: (await s.db.ledger.list({ tenant })).jobs.length,
      checkpoints: await checkpoints(tenant, threadId),
      storeItems: (await c.store.searchItems(['memories'])).items.length,
    };
  };

  it("is absent (404) without the flag, and with it deletes the caller's tenant's records only", async () => {
    const acmeThread = await populate(KEYS.acme);
    const globexThread = await populate(KEYS.globex);
    expect(await holdings('acme', KEYS.acme, acmeThread)).toMatchObject({ assistants: 5, threads: 2, jobs: 1, storeItems: 1 });
    expect((await holdings('acme', KEYS.acme, acmeThread)).checkpoints).toBeGreaterThan(0);

    const all = { runs: true, threads: true, assistants: true, store: true, checkpoint: true };
    const refused = await call(plainUrl, '/internal/truncate', KEYS.acme, all);
    expect(refused.status).toBe(404);
    expect((await holdings('acme', KEYS.acme, acmeThread)).assistants).toBe(5);

    const res = await call(s.url, '/internal/truncate', KEYS.acme, all);
    expect([res.status, await res.json()]).toEqual([200, { ok: true }]);
    // The graphs' default assistants stay: they are not stored.
    expect(await holdings('acme', KEYS.acme, acmeThread)).toEqual({ assistants: 4, threads: 0, jobs: 0, checkpoints: 0, storeItems: 0 });
    const globex = await holdings('globex', KEYS.globex, globexThread);
    expect(globex).toMatchObject({ assistants: 5, threads: 2, jobs: 1, storeItems: 1 });
    expect(globex.checkpoints).toBeGreaterThan(0);
  });

  it('truncates only the parts asked for', async () => {
    const c = s.client(KEYS.globex);
    const before = await c.assistants.count();
    const res = await call(s.url, '/internal/truncate', KEYS.globex, { threads: true });
    expect(res.status).toBe(200);
    expect(await c.threads.search()).toEqual([]);
    expect(await c.assistants.count()).toBe(before);
    expect((await s.db.ledger.list({ tenant: 'globex' })).jobs.length).toBe(1);
  });
});
