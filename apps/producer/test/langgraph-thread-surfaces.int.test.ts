// The smaller thread and run surfaces of LangGraph's server, through the official SDK: state at a
// checkpoint, history by GET and with filters, search sort and select, count, the graph and
// assistant a run writes into its thread's metadata, and the runs list's status filter.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assistantIdOf } from '../src/langgraph-api/assistants';
import { KEYS, type LangGraphStack, SDKS, startLangGraphStack } from './langgraph-stack';

let s: LangGraphStack;
beforeAll(async () => {
  s = await startLangGraphStack('lg_thread_surfaces');
  s.worker('lg-thread-surfaces');
});
afterAll(() => s?.close());

describe.each(SDKS)('LangGraph API through the SDK: thread reads (SDK %s)', (sdk) => {
  const client = () => s.client(undefined, sdk);

  it('state at a checkpoint (by id and by reference), history by GET and filtered by metadata or checkpoint', async () => {
    const c = client();
    const thread = await c.threads.create();
    await c.runs.wait(thread.thread_id, 'echo', { input: { steps: 3 } });
    const history = await c.threads.getHistory(thread.thread_id, { limit: 100 });
    const older = history.find((h) => (h.values as { done: number }).done === 1 && h.next.length === 1);
    const id = older?.checkpoint.checkpoint_id as string;
    expect((await c.threads.getState(thread.thread_id, id)).values).toMatchObject({ done: 1, log: ['step 1'] });
    const byRef = await c.threads.getState(thread.thread_id, { thread_id: thread.thread_id, checkpoint_id: id, checkpoint_ns: '', checkpoint_map: null });
    expect([byRef.checkpoint.checkpoint_id, byRef.checkpoint.thread_id, byRef.values]).toEqual([id, thread.thread_id, older?.values]);
    await expect(c.threads.getState(thread.thread_id, randomUUID())).rejects.toThrow(/404/);

    const get = await fetch(`${s.url}/threads/${thread.thread_id}/history?limit=2`, { headers: { 'x-api-key': KEYS.acme } });
    expect(get.status).toBe(200);
    const got = (await get.json()) as Array<{ checkpoint: { checkpoint_id: string } }>;
    expect(got.map((h) => h.checkpoint.checkpoint_id)).toEqual(history.slice(0, 2).map((h) => h.checkpoint.checkpoint_id));

    const inputs = await c.threads.getHistory(thread.thread_id, { limit: 100, metadata: { source: 'input' } });
    expect(inputs.length).toBeGreaterThan(0);
    expect(inputs.length).toBeLessThan(history.length);
    expect(inputs.every((h) => h.metadata?.source === 'input')).toBe(true);
    const one = await c.threads.getHistory(thread.thread_id, { checkpoint: { checkpoint_id: id } });
    expect(one.map((h) => h.checkpoint.checkpoint_id)).toEqual([id]);
  });

  it('search sorts and selects; count counts; a run writes its graph_id and assistant_id into the thread', async () => {
    const c = client();
    const tag = { suite: randomUUID() };
    // Created c, a, b: newest first is b, a, c; by thread id it is a, b, c.
    const ids = ['c', 'a', 'b'].map((p) => `${p.repeat(8)}-${randomUUID().slice(9)}`);
    for (const threadId of ids) await c.threads.create({ threadId, metadata: tag });
    const [a, b, cc] = [...ids].sort();
    expect((await c.threads.search({ metadata: tag })).map((t) => t.thread_id)).toEqual([b, a, cc]);
    expect((await c.threads.search({ metadata: tag, sortBy: 'thread_id', sortOrder: 'asc' })).map((t) => t.thread_id)).toEqual([a, b, cc]);
    expect((await c.threads.search({ metadata: tag, sortBy: 'created_at', sortOrder: 'asc' })).map((t) => t.thread_id)).toEqual(ids);
    const selected = await c.threads.search({ metadata: tag, select: ['thread_id', 'status'], limit: 1 });
    expect(selected).toEqual([{ thread_id: b, status: 'idle' }]);
    expect(await c.threads.count({ metadata: tag })).toBe(3);

    await c.runs.wait(a as string, 'echo', { input: { steps: 1 } });
    expect((await c.threads.get(a as string)).metadata).toEqual({ ...tag, graph_id: 'echo', assistant_id: assistantIdOf('echo') });
    expect(await c.threads.count({ metadata: { ...tag, graph_id: 'echo' } })).toBe(1);
    expect(await c.threads.count({ metadata: tag, status: 'idle' })).toBe(3);
    expect((await c.threads.search({ metadata: { graph_id: 'echo', ...tag } })).map((t) => t.thread_id)).toEqual([a]);
  });

  it('runs list filters by status', async () => {
    const c = client();
    const thread = await c.threads.create();
    await c.runs.wait(thread.thread_id, 'approval', { input: { request: 'x' } });
    await c.runs.wait(thread.thread_id, 'approval', { command: { resume: { approved: true } } });
    await c.runs.wait(thread.thread_id, 'approval', { input: { request: 'y' } });
    const all = await c.runs.list(thread.thread_id);
    expect(all.map((r) => r.status)).toEqual(['interrupted', 'success']);
    expect((await c.runs.list(thread.thread_id, { status: 'success' })).map((r) => r.run_id)).toEqual([all[1]?.run_id]);
    expect(await c.runs.list(thread.thread_id, { status: 'error' })).toEqual([]);
  });
});

describe.each(SDKS)('LangGraph API through the SDK: thread copy, supersteps, on_completion (SDK %s)', (sdk) => {
  const client = () => s.client(undefined, sdk);

  it('DELETE a run: an unfinished one is rolled back (gone with its checkpoints)', async () => {
    const c = client();
    const parked = await c.threads.create();
    await c.runs.wait(parked.thread_id, 'approval', { input: { request: 'x' } });
    const [run] = await c.runs.list(parked.thread_id);
    await c.runs.delete(parked.thread_id, run?.run_id as string);
    await expect(c.runs.get(parked.thread_id, run?.run_id as string)).rejects.toThrow(/404/);
    expect(await c.runs.list(parked.thread_id)).toEqual([]);
    expect((await c.threads.getState(parked.thread_id)).values).toEqual({});
    expect((await c.threads.get(parked.thread_id)).status).toBe('idle');
  });

  it('DELETE a finished run: gone for this API with its checkpoints, as on LangGraph; its job stays in /v1 as the receipt', async () => {
    const c = client();
    const thread = await c.threads.create();
    await c.runs.wait(thread.thread_id, 'echo', { input: { steps: 1 } });
    const before = (await c.threads.getState(thread.thread_id)).values;
    await c.runs.wait(thread.thread_id, 'echo', { input: { steps: 2 } });
    const [second, first] = await c.runs.list(thread.thread_id);
    await c.runs.delete(thread.thread_id, second?.run_id as string);
    await expect(c.runs.get(thread.thread_id, second?.run_id as string)).rejects.toThrow(/404/);
    await expect(c.runs.delete(thread.thread_id, second?.run_id as string)).rejects.toThrow(/404/);
    expect((await c.runs.list(thread.thread_id)).map((r) => r.run_id)).toEqual([first?.run_id]);
    expect((await c.threads.getState(thread.thread_id)).values).toEqual(before);
    const headers = { 'x-api-key': KEYS.acme };
    const receipt = (await (await fetch(`${s.url}/v1/jobs/${second?.run_id}`, { headers })).json()) as { status: string; recoveryReason: string };
    expect([receipt.status, receipt.recoveryReason]).toEqual(['completed', 'deleted']);
    const { events } = (await (await fetch(`${s.url}/v1/jobs/${second?.run_id}/events`, { headers })).json()) as { events: Array<{ type: string }> };
    expect(events.at(-1)?.type).toBe('deleted');

    // A cancelled run too (LangGraph's auth tests cancel a scheduled run, then delete it).
    const later = await c.runs.create(thread.thread_id, 'echo', { input: { steps: 1 }, afterSeconds: 100 });
    await c.runs.cancel(thread.thread_id, later.run_id, true);
    await c.runs.delete(thread.thread_id, later.run_id);
    await expect(c.runs.get(thread.thread_id, later.run_id)).rejects.toThrow(/404/);
  });

  it('DELETE a finished run answers 409 while another run of its thread is unfinished (its checkpoints may build on it)', async () => {
    const c = client();
    const thread = await c.threads.create();
    await c.runs.wait(thread.thread_id, 'echo', { input: { steps: 1 } });
    const [done] = await c.runs.list(thread.thread_id);
    await c.runs.wait(thread.thread_id, 'approval', { input: { request: 'x' } });
    await expect(c.runs.delete(thread.thread_id, done?.run_id as string)).rejects.toThrow(/409/);
    expect(await c.runs.get(thread.thread_id, done?.run_id as string)).toMatchObject({ status: 'success' });
  });

  it('copy: a new thread with the same checkpoints and metadata; runs on it leave the source alone', async () => {
    const c = client();
    const source = await c.threads.create({ metadata: { team: 'a' } });
    await c.runs.wait(source.thread_id, 'chat', { input: { messages: 'one' } });
    const copy = await c.threads.copy(source.thread_id);
    expect(copy.thread_id).not.toBe(source.thread_id);
    expect(copy.metadata).toMatchObject({ team: 'a', graph_id: 'chat', thread_id: copy.thread_id });
    const [a, b] = await Promise.all([c.threads.getHistory(source.thread_id, { limit: 100 }), c.threads.getHistory(copy.thread_id, { limit: 100 })]);
    expect(b.map((h) => [h.checkpoint.checkpoint_id, h.values, h.next])).toEqual(a.map((h) => [h.checkpoint.checkpoint_id, h.values, h.next]));
    await c.runs.wait(copy.thread_id, 'chat', { input: { messages: 'two' } });
    expect(((await c.threads.getState(copy.thread_id)).values as { messages: unknown[] }).messages).toHaveLength(4);
    expect(((await c.threads.getState(source.thread_id)).values as { messages: unknown[] }).messages).toHaveLength(2);
    await expect(c.threads.copy(randomUUID())).rejects.toThrow(/404/);
  });

  it('supersteps seed a new thread through its graph; a refused one answers 422 (400 without graph_id) and leaves no thread', async () => {
    const c = client();
    const seeded = await c.threads.create({
      graphId: 'echo',
      supersteps: [{ updates: [{ values: { done: 5, log: ['seeded'] }, asNode: 'step' }] }],
    });
    expect((await c.threads.getState(seeded.thread_id)).values).toMatchObject({ done: 5, log: ['seeded'] });
    expect(await c.runs.wait(seeded.thread_id, 'echo', { input: { steps: 6 } })).toMatchObject({ done: 6, log: ['seeded', 'step 6'] });
    const threadId = randomUUID();
    await expect(c.threads.create({ threadId, graphId: 'echo', supersteps: [{ updates: [{ values: { done: 1 }, asNode: 'nowhere' }] }] })).rejects.toThrow(
      /422/,
    );
    await expect(c.threads.get(threadId)).rejects.toThrow(/404/);
    // Without metadata.graph_id there is no graph to write them through: a malformed request (400).
    await expect(c.threads.create({ threadId, supersteps: [{ updates: [{ values: {}, asNode: 'step' }] }] })).rejects.toThrow(/400.*graph_id/);
    await expect(c.threads.get(threadId)).rejects.toThrow(/404/);
  });

  it("on_completion: keep keeps a stateless run's thread; delete answers 422 and admits nothing", async () => {
    const c = client();
    const before = (await s.db.ledger.list({ limit: 500 })).jobs.length;
    // The SDK's typings name other values (complete, continue); the server's are delete and keep.
    const payload = (onCompletion: string) => ({ input: { steps: 1 }, onCompletion }) as never;
    await expect(c.runs.wait(null, 'echo', payload('delete'))).rejects.toThrow(/422/);
    expect((await s.db.ledger.list({ limit: 500 })).jobs.length).toBe(before);
    expect(await c.runs.wait(null, 'echo', payload('keep'))).toMatchObject({ done: 1 });
    const [job] = (await s.db.ledger.list({ limit: 1 })).jobs;
    expect((await c.threads.get(job?.threadId as string)).status).toBe('idle');
  });
});
