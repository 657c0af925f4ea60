// A run that stops inside a subgraph, read through the official SDK as LangGraph's server answers
// it: each task's `path`, a subgraph task's checkpoint (`thread_id`, `checkpoint_ns`) and, with
// `subgraphs`, its state.
import path from 'node:path';
import type { Checkpoint } from '@langchain/langgraph-sdk';
import { loadGraphs } from '@runledger/runtime';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type LangGraphStack, startLangGraphStack } from './langgraph-stack';

const config = path.join(import.meta.dirname, 'fixtures/fidelity-project/langgraph.json');

let s: LangGraphStack;
let failed = false;
beforeAll(async () => {
  const graphs = await loadGraphs({ configPath: config, env: {}, notice: () => {} });
  s = await startLangGraphStack('lg_subgraphs', { graphs });
  s.worker('lg-subgraphs-w1', { RUNLEDGER_CONFIG: config });
});
afterEach((ctx) => {
  if (ctx.task.result?.state === 'fail') failed = true;
});
afterAll(() => s?.close(failed));

describe('LangGraph API: subgraph state', { timeout: 90_000 }, () => {
  it("a run stopped inside a subgraph: the parent's task names its path and the subgraph's checkpoint; subgraphs=true its state", async () => {
    const client = s.client();
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, 'with_subgraph', { input: {} });
    const state = await client.threads.getState(thread.thread_id);
    expect(state.next).toEqual(['inner']);
    expect(state.tasks).toEqual([
      {
        id: expect.any(String),
        name: 'inner',
        path: ['__pregel_pull', 'inner'],
        error: null,
        interrupts: [],
        checkpoint: { thread_id: thread.thread_id, checkpoint_ns: expect.stringMatching(/^inner:/) },
        state: null,
        result: null,
      },
    ]);
    const deep = await client.threads.getState(thread.thread_id, undefined, { subgraphs: true });
    const sub = deep.tasks[0]?.state as unknown as { values: unknown; next: string[]; tasks: Array<{ name: string; path: unknown[] }> };
    expect(deep.tasks[0]?.checkpoint).toBeNull();
    expect(sub.values).toEqual({ log: ['prepare'], city: 'Paris' });
    expect(sub.next).toEqual(['report']);
    expect(sub.tasks.map((t) => [t.name, t.path])).toEqual([['report', ['__pregel_pull', 'report']]]);
  });

  it("a subgraph's checkpoint (checkpoint_ns) as a state read, an update's target and a history filter; the run goes on from the update", async () => {
    const client = s.client();
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, 'with_subgraph', { input: {} });
    // The task's checkpoint as the server sends it: thread_id and checkpoint_ns (the SDK's type wants more).
    const ref = (await client.threads.getState(thread.thread_id)).tasks[0]?.checkpoint as unknown as Checkpoint;
    const before = await client.threads.getState(thread.thread_id, ref);
    expect([before.values, before.next, before.checkpoint.checkpoint_ns]).toEqual([{ log: ['prepare'], city: 'Paris' }, ['report'], ref.checkpoint_ns]);

    const written = await client.threads.updateState(thread.thread_id, { values: { city: 'Lyon' }, checkpoint: ref });
    expect((written as { checkpoint: { checkpoint_ns: string } }).checkpoint.checkpoint_ns).toBe(ref.checkpoint_ns);
    const after = await client.threads.getState<{ city: string }>(thread.thread_id, ref);
    expect([after.values.city, after.next]).toEqual(['Lyon', ['report']]);
    const history = await client.threads.getHistory(thread.thread_id, { checkpoint: ref, limit: 10 });
    expect(history.map((h) => (h.values as { city?: string }).city).slice(0, 2)).toEqual(['Lyon', 'Paris']);
    expect(history.every((h) => h.checkpoint.checkpoint_ns === ref.checkpoint_ns)).toBe(true);
    // The root's state is untouched; the run resumed inside the subgraph reports the updated city.
    expect((await client.threads.getState(thread.thread_id)).values).toEqual({ log: ['prepare'] });
    expect(await client.runs.wait(thread.thread_id, 'with_subgraph', { input: null })).toEqual({ log: ['prepare', 'prepare', 'report Lyon'] });
  });

  it('a checkpoint_ns naming no subgraph: the state read answers 404, the update 422 and writes nothing', async () => {
    const client = s.client();
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, 'with_subgraph', { input: {} });
    const ref = { thread_id: thread.thread_id, checkpoint_ns: 'nowhere:1' } as unknown as Checkpoint;
    const history = await client.threads.getHistory(thread.thread_id, { limit: 100 });
    await expect(client.threads.getState(thread.thread_id, ref)).rejects.toThrow(/404/);
    await expect(client.threads.updateState(thread.thread_id, { values: { city: 'Lyon' }, checkpoint: ref })).rejects.toThrow(/422.*checkpoint_ns/);
    expect(await client.threads.getHistory(thread.thread_id, { limit: 100 })).toHaveLength(history.length);
    expect(await client.threads.getHistory(thread.thread_id, { checkpoint: ref })).toEqual([]);
  });
});
