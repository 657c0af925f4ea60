// Assistants, threads, human-in-the-loop and bad input through the official LangGraph SDK Client
// against a real producer, PostgreSQL, queue and worker process.
import { randomUUID } from 'node:crypto';
import { langGraphThreadId } from '@runledger/ledger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, type LangGraphStack, SDKS, startLangGraphStack } from './langgraph-stack';

// Python: uuid.uuid5(uuid.UUID('6ba7b821-9dad-11d1-80b4-00c04fd430c8'), 'chat'), the Platform's default assistant id of graph "chat".
const CHAT_ASSISTANT = 'eb6db400-e3c8-5d06-a834-015cb89efe69';

let s: LangGraphStack;
beforeAll(async () => {
  s = await startLangGraphStack('lg_threads');
  s.worker('lg-threads-w1');
});
afterAll(() => s?.close());

describe.each(SDKS)('LangGraph API through the SDK: assistants, threads, interrupts, bad input (SDK %s)', (sdk) => {
  const sdkClient = (key?: string) => s.client(key, sdk);

  it('one default assistant per graph: uuid5 of the graph id, found by either id', async () => {
    const client = sdkClient();
    const all = await client.assistants.search({ limit: 100 });
    expect(all.map((a) => a.graph_id).sort()).toEqual(['approval', 'chat', 'echo', 'vacation']);
    const chat = await client.assistants.get('chat');
    expect(chat.assistant_id).toBe(CHAT_ASSISTANT);
    expect((await client.assistants.get(CHAT_ASSISTANT)).graph_id).toBe('chat');
    const graph = await client.assistants.getGraph(CHAT_ASSISTANT);
    expect(graph.nodes.map((n) => n.id)).toEqual(['__start__', 'reply', '__end__']);
    // The run works with the uuid too, and reports it.
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, CHAT_ASSISTANT, { input: { messages: 'uuid' } });
    expect(run.assistant_id).toBe(CHAT_ASSISTANT);
    await client.runs.join(thread.thread_id, run.run_id);
  });

  it('threads: create with an id and if_exists, get, search by metadata and status, state and history', async () => {
    const client = sdkClient();
    const threadId = randomUUID();
    const created = await client.threads.create({ threadId, metadata: { owner: `ann-${sdk}` } });
    expect(created).toMatchObject({ thread_id: threadId, status: 'idle', metadata: { owner: `ann-${sdk}` }, values: null });
    await expect(client.threads.create({ threadId })).rejects.toThrow(/409/);
    expect((await client.threads.create({ threadId, ifExists: 'do_nothing' })).thread_id).toBe(threadId);
    expect(await client.threads.getState(threadId)).toMatchObject({ values: {}, next: [] });

    await client.runs.wait(threadId, 'chat', { input: { messages: 'one' } });
    await client.runs.wait(threadId, 'chat', { input: { messages: 'two' } });
    const state = await client.threads.getState<{ messages: Array<{ content: string; type: string }> }>(threadId);
    expect(state.values.messages.map((m) => [m.type, m.content])).toEqual([
      ['human', 'one'],
      ['ai', 'You said: one'],
      ['human', 'two'],
      ['ai', 'You said: two'],
    ]);
    expect(state.checkpoint?.checkpoint_id).toBeTruthy();
    const history = await client.threads.getHistory(threadId, { limit: 3 });
    expect(history).toHaveLength(3);
    expect(history[0]?.checkpoint?.checkpoint_id).toBe(state.checkpoint?.checkpoint_id);
    const older = await client.threads.getHistory(threadId, {
      limit: 1,
      before: history[0]?.checkpoint ? { configurable: { checkpoint_id: history[0].checkpoint.checkpoint_id } } : undefined,
    });
    expect(older[0]?.checkpoint?.checkpoint_id).toBe(history[1]?.checkpoint?.checkpoint_id);

    const found = await client.threads.search({ metadata: { owner: `ann-${sdk}` } });
    expect(found.map((t) => t.thread_id)).toEqual([threadId]);
    expect((await client.threads.search({ ids: [threadId], status: 'busy' })).length).toBe(0);
    expect((await client.threads.search({ ids: [threadId], status: 'idle' })).length).toBe(1);
  });

  it('threads: patch merges metadata; delete refuses a thread with an open run, then removes it and its checkpoints', async () => {
    const client = sdkClient();
    const thread = await client.threads.create({ metadata: { a: 1 } });
    expect((await client.threads.update(thread.thread_id, { metadata: { b: 2 } })).metadata).toEqual({ a: 1, b: 2 });
    const paused = await client.runs.wait(thread.thread_id, 'approval', { input: { request: 'a car' } });
    expect(paused).toHaveProperty('__interrupt__');
    await expect(client.threads.delete(thread.thread_id)).rejects.toThrow(/409/);
    const [run] = await client.runs.list(thread.thread_id);
    await client.runs.cancel(thread.thread_id, run?.run_id as string, true);
    await expect(sdkClient(KEYS.globex).threads.delete(thread.thread_id)).rejects.toThrow(/404/);
    // The tenant's checkpoints live under its LangGraph thread id.
    const checkpoints = async () =>
      (await s.db.ledger.pool.query('SELECT count(*)::int AS n FROM checkpoints WHERE thread_id = $1', [langGraphThreadId('acme', thread.thread_id)])).rows[0]
        .n;
    expect(await checkpoints()).toBeGreaterThan(0);
    await client.threads.delete(thread.thread_id);
    await expect(client.threads.get(thread.thread_id)).rejects.toThrow(/404/);
    expect(await checkpoints()).toBe(0);
    // The run stays a job: the ledger keeps its receipt.
    expect((await s.db.ledger.get(run?.run_id as string)).status).toBe('cancelled');
  });

  it('threads are per tenant: two tenants create one thread id, each runs on its own and reads only its own state', async () => {
    const threadId = randomUUID();
    const [acme, globex] = [sdkClient(KEYS.acme), sdkClient(KEYS.globex)];
    const [a, g] = await Promise.all([acme.threads.create({ threadId }), globex.threads.create({ threadId })]);
    expect([a.thread_id, g.thread_id]).toEqual([threadId, threadId]);
    await Promise.all([
      acme.runs.wait(threadId, 'chat', { input: { messages: 'acme secret' } }),
      globex.runs.wait(threadId, 'chat', { input: { messages: 'globex secret' } }),
    ]);
    type Messages = { messages: Array<{ content: string }> };
    const contents = async (c: typeof acme) => (await c.threads.getState<Messages>(threadId)).values.messages.map((m) => m.content);
    expect(await contents(acme)).toEqual(['acme secret', 'You said: acme secret']);
    expect(await contents(globex)).toEqual(['globex secret', 'You said: globex secret']);
    expect((await acme.threads.getState(threadId)).checkpoint?.thread_id).toBe(threadId);
  });

  it('human in the loop: the run ends interrupted, the thread shows its interrupt, command resume finishes it', async () => {
    const client = sdkClient();
    const thread = await client.threads.create();
    const paused = (await client.runs.wait(thread.thread_id, 'approval', { input: { request: 'buy a boat' } })) as {
      __interrupt__?: Array<{ value: unknown }>;
    };
    expect(paused.__interrupt__?.[0]?.value).toEqual({ question: 'Approve "buy a boat"? Resume with { "approved": true|false }.' });
    const t = await client.threads.get(thread.thread_id);
    expect(t.status).toBe('interrupted');
    expect(Object.values(t.interrupts).flat()).toHaveLength(1);
    const [run] = await client.runs.list(thread.thread_id);
    expect(run?.status).toBe('interrupted');
    const state = await client.threads.getState(thread.thread_id);
    expect(state.next).toEqual(['review']);

    const parts = [];
    for await (const part of client.runs.stream(thread.thread_id, 'approval', { command: { resume: { approved: true } }, streamMode: 'values' }))
      parts.push(part);
    expect(parts.find((p) => p.event === 'metadata')?.data).toMatchObject({ run_id: run?.run_id });
    expect(parts.filter((p) => p.event === 'values').at(-1)?.data).toMatchObject({ outcome: 'buy a boat: approved' });
    expect((await client.threads.get(thread.thread_id)).status).toBe('idle');
    expect((await client.runs.get(thread.thread_id, run?.run_id as string)).status).toBe('success');
  });

  it('bad input answers 4xx before anything is written or streamed', async () => {
    const client = sdkClient();
    const before = (await s.db.ledger.list({ limit: 500 })).jobs.length;
    const thread = await client.threads.create();
    const post = (path: string, body: unknown) =>
      fetch(`${s.url}${path}`, { method: 'POST', headers: { 'x-api-key': KEYS.acme, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const cases: Array<[string, unknown, number, string]> = [
      ['/threads/not-a-uuid/runs/stream', { assistant_id: 'chat', input: { messages: 'x' } }, 400, 'invalid_request'],
      [`/threads/${thread.thread_id}/runs/stream`, { assistant_id: 'nope', input: {} }, 404, 'not_found'],
      [`/threads/${thread.thread_id}/runs/stream`, { assistant_id: 'chat', input: { messages: 5 } }, 422, 'invalid_input'],
      [`/threads/${thread.thread_id}/runs/stream`, { assistant_id: 'chat', input: { messages: 'x' }, stream_mode: 'everything' }, 400, 'invalid_request'],
      [`/threads/${thread.thread_id}/runs/wait`, { assistant_id: 42 }, 400, 'invalid_request'],
      [`/threads/${thread.thread_id}/runs`, { assistant_id: 'chat', input: { messages: 'x' }, checkpoint_id: 'x' }, 404, 'not_found'],
      [`/threads/${thread.thread_id}/runs`, { assistant_id: 'chat', input: { messages: 'x' }, webhook: 'http://x' }, 422, 'invalid_webhook'], // webhooks off: no allowed host
      [`/threads/${thread.thread_id}/runs`, { assistant_id: 'chat', input: { messages: 'x' }, command: { goto: 'nowhere' } }, 422, 'invalid_request'],
      [`/threads/${randomUUID()}/runs/stream`, { assistant_id: 'chat', input: { messages: 'x' } }, 404, 'not_found'],
      ['/runs/stream', { assistant_id: 'echo', input: { steps: 'many' } }, 422, 'invalid_input'],
    ];
    for (const [path, body, status, code] of cases) {
      const r = await post(path, body);
      expect([path, r.status, r.headers.get('content-type')]).toEqual([path, status, 'application/json; charset=utf-8']);
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe(code);
    }
    await expect(client.runs.wait(thread.thread_id, 'approval', { command: { resume: true } })).rejects.toThrow(/409/);
    const join = await fetch(`${s.url}/threads/${thread.thread_id}/runs/${randomUUID()}/stream`, { headers: { 'x-api-key': KEYS.acme } });
    expect(join.status).toBe(404);
    expect((await s.db.ledger.list({ limit: 500 })).jobs.length).toBe(before);
  });
});
