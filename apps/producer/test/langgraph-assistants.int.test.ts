// Stored assistants through the official LangGraph SDK Client against a real producer, PostgreSQL,
// queue and worker process: versions, latest, search, count, delete, bad requests, tenants, runs.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, type LangGraphStack, SDKS, startLangGraphStack } from './langgraph-stack';

let s: LangGraphStack;
beforeAll(async () => {
  s = await startLangGraphStack('lg_assistants');
  s.worker('lg-assistants-w1');
});
afterAll(() => s?.close());

const post = (path: string, body: unknown, key = KEYS.acme) =>
  fetch(`${s.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify(body) });

describe.each(SDKS)('LangGraph API through the SDK: stored assistants (SDK %s)', (sdk) => {
  const client = (key?: string) => s.client(key, sdk);

  it('create, get, update (a version each), versions, latest, delete', async () => {
    const c = client();
    const config = { configurable: { model_name: 'gpt' } };
    const created = await c.assistants.create({ graphId: 'chat', config, context: { tone: 'dry' }, metadata: { team: 'a' }, name: 'bot', description: 'foo' });
    expect(created).toMatchObject({ graph_id: 'chat', config, context: { tone: 'dry' }, metadata: { team: 'a' }, name: 'bot', description: 'foo', version: 1 });
    expect(created.assistant_id).toMatch(/^[0-9a-f-]{36}$/);
    const id = created.assistant_id;

    const updated = await c.assistants.update(id, { metadata: { owner: 'ann' }, description: 'bar' });
    expect(updated).toMatchObject({ version: 2, config, metadata: { team: 'a', owner: 'ann' }, description: 'bar', name: 'bot' });
    expect(await c.assistants.get(id)).toMatchObject({ version: 2, description: 'bar', context: { tone: 'dry' } });
    await c.assistants.update(id, { config: { configurable: { model_name: 'claude' } } });

    expect((await c.assistants.getVersions(id)).map((v) => v.version)).toEqual([3, 2, 1]);
    expect(await c.assistants.getVersions(id, { limit: 1 })).toMatchObject([{ version: 3, config: { configurable: { model_name: 'claude' } } }]);
    expect((await c.assistants.getVersions(id, { offset: 2 })).map((v) => v.version)).toEqual([1]);
    expect((await c.assistants.getVersions(id, { metadata: { owner: 'ann' } })).map((v) => v.version)).toEqual([3, 2]);

    // latest: back to version 1 as it was; the next change is version 4, from version 1.
    expect(await c.assistants.setLatest(id, 1)).toMatchObject({ version: 1, description: 'foo', metadata: { team: 'a' }, config });
    expect(await c.assistants.update(id, {})).toMatchObject({ version: 4, description: 'foo', config });
    await expect(c.assistants.setLatest(id, 9)).rejects.toThrow(/HTTP 404/);
    expect((await c.assistants.get(id)).version).toBe(4);

    await c.assistants.delete(id);
    await expect(c.assistants.get(id)).rejects.toThrow(/HTTP 404.*Assistant not found/);
    await expect(c.assistants.getVersions(id)).rejects.toThrow(/HTTP 404/);
  });

  it('if_exists, and clear errors that change nothing', async () => {
    const c = client();
    const assistantId = randomUUID();
    await c.assistants.create({ graphId: 'chat', assistantId, name: 'first' });
    await expect(c.assistants.create({ graphId: 'echo', assistantId, name: 'second' })).rejects.toThrow(/HTTP 409/);
    expect(await c.assistants.create({ graphId: 'echo', assistantId, name: 'second', ifExists: 'do_nothing' })).toMatchObject({
      name: 'first',
      graph_id: 'chat',
    });
    // A graph's default assistant cannot be taken, changed or deleted.
    const chat = await c.assistants.get('chat');
    await expect(c.assistants.create({ graphId: 'chat', assistantId: chat.assistant_id })).rejects.toThrow(/HTTP 409/);
    await expect(c.assistants.update('chat', { name: 'x' })).rejects.toThrow(/HTTP 409/);
    await expect(c.assistants.delete(chat.assistant_id)).rejects.toThrow(/HTTP 409/);
    // graph_id must be served, on create and on update.
    await expect(c.assistants.create({ graphId: 'nope' })).rejects.toThrow(/HTTP 422.*graph_id .*nope.* is not a served graph/);
    await expect(c.assistants.update(assistantId, { graphId: 'nope' })).rejects.toThrow(/HTTP 422/);
    expect(await c.assistants.get(assistantId)).toMatchObject({ version: 1, graph_id: 'chat' });
    await expect(c.assistants.create({ graphId: 'chat', assistantId: 'not-a-uuid' })).rejects.toThrow(/HTTP 400/);
    await expect(c.assistants.update(randomUUID(), { name: 'x' })).rejects.toThrow(/HTTP 404/);
    await expect(c.assistants.delete(randomUUID())).rejects.toThrow(/HTTP 404/);
    // The built-in one has a single version 1.
    expect((await c.assistants.getVersions('chat')).map((v) => v.version)).toEqual([1]);
    await expect(c.assistants.setLatest('chat', 2)).rejects.toThrow(/HTTP 404/);
  });

  it('search by name, graph and metadata, sorted, selected and paged; count', async () => {
    const c = client(KEYS.globex);
    const tag = randomUUID();
    for (const name of ['Alpha SIMPLE_runtime', 'beta', 'gamma']) await c.assistants.create({ graphId: 'chat', name, metadata: { tag } });
    await c.assistants.create({ graphId: 'echo', name: 'delta', metadata: { tag } });

    const mine = { metadata: { tag } };
    expect((await c.assistants.search({ ...mine, sortBy: 'name', sortOrder: 'asc' })).map((a) => a.name)).toEqual([
      'Alpha SIMPLE_runtime',
      'beta',
      'delta',
      'gamma',
    ]);
    expect((await c.assistants.search({ ...mine, sortBy: 'name', sortOrder: 'desc', limit: 2 })).map((a) => a.name)).toEqual(['gamma', 'delta']);
    expect((await c.assistants.search({ ...mine, graphId: 'echo' })).map((a) => a.name)).toEqual(['delta']);
    expect((await c.assistants.search({ ...mine, name: 'ple_RUN' })).map((a) => a.name)).toEqual(['Alpha SIMPLE_runtime']);
    // Newest first by default; the built-in ones are found too.
    expect((await c.assistants.search(mine)).map((a) => a.name)).toEqual(['delta', 'gamma', 'beta', 'Alpha SIMPLE_runtime']);
    expect((await c.assistants.search({ metadata: { created_by: 'system' }, limit: 100 })).map((a) => a.graph_id).sort()).toEqual([
      'approval',
      'chat',
      'echo',
      'vacation',
    ]);
    const selected = await c.assistants.search({ ...mine, select: ['assistant_id', 'name'], limit: 1 });
    expect(Object.keys(selected[0] ?? {}).sort()).toEqual(['assistant_id', 'name']);

    const paged = await c.assistants.search({ ...mine, limit: 3, includePagination: true });
    expect(paged.assistants).toHaveLength(3);
    expect(paged.next).toBe('3');
    const res = await post('/assistants/search', { metadata: { tag }, limit: 3, offset: 3 }, KEYS.globex);
    expect(res.headers.get('x-pagination-total')).toBe('4');
    expect(res.headers.get('x-pagination-next')).toBeNull();
    expect(((await res.json()) as unknown[]).length).toBe(1);

    expect(await c.assistants.count(mine)).toBe(4);
    expect(await c.assistants.count({ ...mine, graphId: 'chat', name: 'a' })).toBe(3);
    expect(await c.assistants.count({ graphId: 'chat' })).toBeGreaterThanOrEqual(4);
  });

  it("a tenant never sees, changes or runs another tenant's assistant", async () => {
    const acme = client(KEYS.acme);
    const globex = client(KEYS.globex);
    const mine = await acme.assistants.create({ graphId: 'chat', name: `acme-only-${sdk}` });
    const id = mine.assistant_id;
    await expect(globex.assistants.get(id)).rejects.toThrow(/HTTP 404/);
    await expect(globex.assistants.update(id, { name: 'stolen' })).rejects.toThrow(/HTTP 404/);
    await expect(globex.assistants.delete(id)).rejects.toThrow(/HTTP 404/);
    await expect(globex.assistants.getVersions(id)).rejects.toThrow(/HTTP 404/);
    await expect(globex.assistants.setLatest(id, 1)).rejects.toThrow(/HTTP 404/);
    await expect(globex.assistants.getGraph(id)).rejects.toThrow(/HTTP 404/);
    expect(await globex.assistants.search({ name: `acme-only-${sdk}` })).toEqual([]);
    expect(await globex.assistants.count({ name: `acme-only-${sdk}` })).toBe(0);
    const thread = await globex.threads.create();
    await expect(globex.runs.create(thread.thread_id, id, { input: { messages: 'hi' } })).rejects.toThrow(/HTTP 404/);
    // The same id is another tenant's own assistant.
    expect(await globex.assistants.create({ graphId: 'echo', assistantId: id, name: 'globex' })).toMatchObject({ assistant_id: id, name: 'globex' });
    expect((await acme.assistants.get(id)).name).toBe(`acme-only-${sdk}`);
  });

  it('a run on a stored assistant reports it and is pinned to the version it started with', async () => {
    const c = client();
    const assistant = await c.assistants.create({ graphId: 'chat', config: { configurable: { persona: 'v1' } } });
    const thread = await c.threads.create();
    const values = (await c.runs.wait(thread.thread_id, assistant.assistant_id, { input: { messages: 'hello' } })) as { messages: Array<{ content: string }> };
    expect(values.messages.map((m) => m.content)).toEqual(['hello', 'You said: hello']);
    await c.assistants.update(assistant.assistant_id, { config: { configurable: { persona: 'v2' } } });
    const run = await c.runs.create(thread.thread_id, assistant.assistant_id, { input: { messages: 'again' } });
    expect(run.assistant_id).toBe(assistant.assistant_id);
    await c.runs.join(thread.thread_id, run.run_id);
    const runs = await c.runs.list(thread.thread_id);
    expect(runs.map((r) => r.assistant_id)).toEqual([assistant.assistant_id, assistant.assistant_id]);
    const pins = await Promise.all(runs.map(async (r) => (await s.db.ledger.get(r.run_id)).metadata?.runledger_assistant));
    expect(pins).toEqual([
      { assistant_id: assistant.assistant_id, version: 2 },
      { assistant_id: assistant.assistant_id, version: 1 },
    ]);
    // Graph, schemas and subgraphs answer for a stored assistant as for its graph.
    expect((await c.assistants.getGraph(assistant.assistant_id)).nodes.map((n) => n.id)).toEqual(['__start__', 'reply', '__end__']);
    expect(await c.assistants.getSchemas(assistant.assistant_id)).toEqual(await c.assistants.getSchemas('chat'));
    expect(await c.assistants.getSubgraphs(assistant.assistant_id)).toEqual({});
  });

  it('delete_threads removes the threads naming the assistant, and only those', async () => {
    const c = client();
    const { assistant_id } = await c.assistants.create({ graphId: 'chat' });
    const named = await c.threads.create({ metadata: { assistant_id } });
    const other = await c.threads.create({ metadata: { assistant_id: randomUUID() } });
    await c.assistants.delete(assistant_id, { deleteThreads: true });
    await expect(c.threads.get(named.thread_id)).rejects.toThrow(/HTTP 404/);
    expect((await c.threads.get(other.thread_id)).thread_id).toBe(other.thread_id);
    await expect(c.assistants.get(assistant_id)).rejects.toThrow(/HTTP 404/);
  });
});

describe('stored assistants and the producer', () => {
  it('an assistant outlives the producer that created it', async () => {
    const created = await s.client().assistants.create({ graphId: 'chat', name: 'durable', config: { configurable: { k: 1 } } });
    await s.app.close();
    const second = await s.producer();
    expect(await second.client().assistants.get(created.assistant_id)).toMatchObject({ name: 'durable', config: { configurable: { k: 1 } }, version: 1 });
  });
});
