// Custom auth (langgraph.json `auth.path`) through the official SDK against a real producer,
// PostgreSQL, queue and worker process: the project's `authenticate` decides who calls, its
// `on(…)` handlers stamp owners and scope every read, a refusal writes nothing, and a run's graph
// sees the user in its config. The fixture's auth.ts is LangGraph's owner pattern.
import path from 'node:path';
import { Client } from '@langchain/langgraph-sdk';
import { loadCustomAuth, loadGraphs } from '@runledger/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, type LangGraphStack, startLangGraphStack, statusOf } from './langgraph-stack';

const config = path.join(import.meta.dirname, 'fixtures/auth-project/langgraph.json');

let s: LangGraphStack;
let customAuth: Awaited<ReturnType<typeof loadCustomAuth>>;
beforeAll(async () => {
  customAuth = await loadCustomAuth(config);
  s = await startLangGraphStack('lg_auth', { graphs: await loadGraphs({ configPath: config, env: {}, notice: () => {} }), security: { customAuth } });
  s.worker('lg-auth-w1', { RUNLEDGER_CONFIG: config });
});
afterAll(() => s?.close());

const as = (token?: string) =>
  new Client({ apiUrl: s.url, defaultHeaders: token ? { Authorization: `Bearer ${token}` } : {}, callerOptions: { maxRetries: 0 } });
const alice = () => as('token-alice');
const bob = () => as('token-bob');

/** Rows the LangGraph API wrote, read straight from the ledger. */
async function written(): Promise<{ threads: number; assistants: number; jobs: number; items: number }> {
  const { rows } = await s.db.ledger.pool.query(
    `SELECT (SELECT count(*) FROM langgraph_threads)::int AS threads, (SELECT count(*) FROM assistants)::int AS assistants,
            (SELECT count(*) FROM jobs)::int AS jobs, (SELECT count(*) FROM store_items)::int AS items`,
  );
  return rows[0];
}

describe('authenticate', () => {
  it('answers 401 without a token or with a wrong one, in the house error shape, and writes nothing', async () => {
    const before = await written();
    expect(await statusOf(as().threads.create())).toBe(401);
    expect(await statusOf(as('token-nobody').threads.create())).toBe(401);
    expect(await statusOf(as('token-nobody').runs.wait(null, 'whoami', { input: {} }))).toBe(401);
    expect(await statusOf(as().assistants.create({ graphId: 'whoami' }))).toBe(401);
    expect(await statusOf(as().store.putItem(['x'], 'k', { v: 1 }))).toBe(401);
    const res = await fetch(`${s.url}/threads`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    expect(await res.json()).toEqual({ error: { code: 'unauthorized', message: 'Invalid token' } });
    expect(await written()).toEqual(before);
  });

  it('answers 500 when authenticate throws something other than an HTTPException, without its message', async () => {
    const res = await fetch(`${s.url}/threads/search`, { method: 'POST', headers: { authorization: 'Bearer token-crash' } });
    expect(res.status).toBe(500);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('auth_handler_failed');
    expect(body.error.message).not.toContain('database is down');
  });

  it('leaves /info open, as LangGraph does, and closes /v1 when no API keys are set', async () => {
    expect((await fetch(`${s.url}/info`)).status).toBe(200);
    expect((await fetch(`${s.url}/v1/jobs`, { headers: { authorization: 'Bearer token-alice' } })).status).toBe(401);
    expect((await fetch(`${s.url}/admin`, { headers: { authorization: 'Bearer token-alice' } })).status).toBe(401);
  });

  it('with API keys too: the keys govern /v1, the handler the LangGraph API (a key is not a token there)', async () => {
    const other = await s.producer({ security: { apiKeys: [{ tenant: 'acme', key: KEYS.acme }], customAuth } });
    const key = { authorization: `Bearer ${KEYS.acme}` };
    expect((await fetch(`${other.url}/v1/jobs`, { headers: key })).status).toBe(200);
    expect((await fetch(`${other.url}/v1/jobs`, { headers: { authorization: 'Bearer token-alice' } })).status).toBe(401);
    expect((await fetch(`${other.url}/threads/search`, { method: 'POST', headers: key })).status).toBe(401);
    const res = await fetch(`${other.url}/threads/search`, {
      method: 'POST',
      headers: { authorization: 'Bearer token-alice', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(200);
  });
});

describe('on(…) handlers', () => {
  it('stamp the owner on create, overriding one the client sent', async () => {
    const thread = await alice().threads.create({ metadata: { topic: 'a', owner: 'bob' } });
    expect(thread.metadata).toEqual({ topic: 'a', owner: 'alice' });
    const assistant = await alice().assistants.create({ graphId: 'whoami', metadata: { team: 'x' } });
    expect(assistant.metadata).toMatchObject({ team: 'x', owner: 'alice' });
    const patched = await alice().threads.update(thread.thread_id, { metadata: { owner: 'bob', more: 1 } });
    expect(patched.metadata).toMatchObject({ owner: 'alice', more: 1 });
  });

  it("keep one user from seeing or touching another's threads, runs and assistants (404, as LangGraph answers)", async () => {
    const mine = await alice().threads.create({ metadata: { tag: 'iso' } });
    const run = await alice().runs.wait(mine.thread_id, 'whoami', { input: { question: 'q' } });
    expect(run).toMatchObject({ user_id: 'alice' });
    const [aliceRun] = await alice().runs.list(mine.thread_id);
    const assistant = await alice().assistants.create({ graphId: 'whoami', metadata: { tag: 'iso' } });
    const before = await written();

    const b = bob();
    expect(await statusOf(b.threads.get(mine.thread_id))).toBe(404);
    expect(await statusOf(b.threads.getState(mine.thread_id))).toBe(404);
    expect(await statusOf(b.threads.getHistory(mine.thread_id))).toBe(404);
    expect(await statusOf(b.threads.update(mine.thread_id, { metadata: { hijacked: true } }))).toBe(404);
    expect(await statusOf(b.threads.updateState(mine.thread_id, { values: { question: 'x' } }))).toBe(404);
    expect(await statusOf(b.threads.delete(mine.thread_id))).toBe(404);
    expect(await statusOf(b.runs.list(mine.thread_id))).toBe(404);
    expect(await statusOf(b.runs.get(mine.thread_id, aliceRun?.run_id ?? ''))).toBe(404);
    expect(await statusOf(b.runs.join(mine.thread_id, aliceRun?.run_id ?? ''))).toBe(404);
    expect(await statusOf(b.runs.cancel(mine.thread_id, aliceRun?.run_id ?? ''))).toBe(404);
    // Joining its stream is refused in the stream, as LangGraph's server refuses it: one error event, nothing of the run.
    const refused = { event: 'error', data: { error: 'Error', message: `404: Thread ${mine.thread_id} not found` } };
    for (const joined of [b.runs.joinStream(mine.thread_id, aliceRun?.run_id ?? ''), b.runs.joinStream(null, aliceRun?.run_id ?? '', { lastEventId: '-1' })]) {
      const parts: unknown[] = [];
      for await (const part of joined) parts.push(part);
      expect(parts).toEqual([refused]);
    }
    expect(await statusOf(b.runs.create(mine.thread_id, 'whoami', { input: {} }))).toBe(404);
    expect(await statusOf(b.assistants.get(assistant.assistant_id))).toBe(404);
    expect(await statusOf(b.assistants.update(assistant.assistant_id, { metadata: { hijacked: true } }))).toBe(404);
    expect(await statusOf(b.assistants.delete(assistant.assistant_id))).toBe(404);
    // Copying another user's thread answers 409, as LangGraph's server does.
    expect(await statusOf(b.threads.copy(mine.thread_id))).toBe(409);
    // A thread id another user holds is not handed out by if_exists: do_nothing.
    expect(await statusOf(b.threads.create({ threadId: mine.thread_id, ifExists: 'do_nothing' }))).toBe(409);

    expect((await b.threads.search({ metadata: { tag: 'iso' } })).length).toBe(0);
    expect(await b.threads.count({ metadata: { tag: 'iso' } })).toBe(0);
    // Asking for another owner in the client's own filter finds nothing either.
    expect((await b.threads.search({ metadata: { owner: 'alice' } })).length).toBe(0);
    expect((await b.assistants.search({ metadata: { tag: 'iso' } })).length).toBe(0);
    expect((await alice().threads.search({ metadata: { tag: 'iso' } })).map((t) => t.thread_id)).toEqual([mine.thread_id]);
    expect(await alice().threads.count({ metadata: { tag: 'iso' } })).toBe(1);
    expect((await alice().assistants.search({ metadata: { tag: 'iso' } })).map((a) => a.assistant_id)).toEqual([assistant.assistant_id]);
    expect((await alice().threads.get(mine.thread_id)).metadata).not.toHaveProperty('hijacked');
    expect(await written()).toEqual(before);
  });

  it("carry the user into the run's config, through the stored job, on a thread-less run too", async () => {
    const values = (await alice().runs.wait(null, 'whoami', { input: { question: 'who?' } })) as Record<string, unknown>;
    expect(values.user_id).toBe('alice');
    expect(values.permissions).toEqual(['read', 'write']);
    expect(values.user).toMatchObject({ identity: 'alice', email: 'alice@example.com', display_name: 'alice', is_authenticated: true });
    // The thread the run created is alice's (the run's stamped metadata), and only hers.
    const { rows } = await s.db.ledger.pool.query(
      `SELECT metadata->'runledger_run'->'config'->'configurable'->>'langgraph_auth_user_id' AS uid, thread_id FROM jobs ORDER BY job_id DESC LIMIT 1`,
    );
    expect(rows[0].uid).toBe('alice');
    expect((await alice().threads.get(rows[0].thread_id)).metadata).toMatchObject({ owner: 'alice' });
    expect(await statusOf(bob().threads.get(rows[0].thread_id))).toBe(404);
  });

  it('answer a handler’s HTTPException with its status, another throw with 500, and write nothing', async () => {
    const before = await written();
    const carol = as('token-carol');
    expect(await statusOf(carol.threads.create())).toBe(403);
    expect(await statusOf(carol.runs.wait(null, 'whoami', { input: {} }))).toBe(403);
    expect(await statusOf(carol.assistants.create({ graphId: 'whoami' }))).toBe(403);
    expect(await statusOf(alice().threads.create({ metadata: { explode: true } }))).toBe(500);
    expect(await statusOf(alice().assistants.create({ graphId: 'whoami', metadata: { explode: true } }))).toBe(500);
    expect(await statusOf(alice().runs.wait(null, 'whoami', { input: {}, metadata: { explode: true } }))).toBe(500);
    expect(await written()).toEqual(before);
  });

  it('refuse crons when their handler returns a filter Runledger cannot apply, and write nothing', async () => {
    const crons = async () => (await s.db.ledger.pool.query('SELECT count(*)::int AS n FROM crons')).rows[0].n;
    const before = await crons();
    const refused = alice().crons.create('whoami', { schedule: '0 0 * * *', input: {} });
    await expect(refused).rejects.toMatchObject({ status: 403 });
    await expect(refused).rejects.toThrow(/cannot apply to crons/);
    expect(await statusOf(alice().crons.search({}))).toBe(403);
    expect(await crons()).toBe(before);
  });

  it("scope the store to the user's namespaces", async () => {
    await alice().store.putItem(['alice', 'prefs'], 'theme', { color: 'blue' });
    await bob().store.putItem(['bob'], 'theme', { color: 'red' });
    expect(await statusOf(alice().store.putItem(['bob'], 'theme', { color: 'green' }))).toBe(403);
    expect(await statusOf(alice().store.getItem(['bob'], 'theme'))).toBe(403);
    expect((await alice().store.searchItems([])).items.map((i) => i.namespace)).toEqual([['alice', 'prefs']]);
    expect((await alice().store.listNamespaces()).namespaces).toEqual([['alice', 'prefs']]);
    expect((await bob().store.getItem(['bob'], 'theme'))?.value).toEqual({ color: 'red' });
  });
});
