// Behaviours LangGraph's own API tests (scripts/langgraph-api-suite.sh) check, pinned here through
// the official SDK: a `debug` stream's checkpoints are the history's, the run's metadata filters
// the history, mixed stream modes end as the Platform's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LangGraphStack, SDKS, startLangGraphStack } from './langgraph-stack';

let s: LangGraphStack;
beforeAll(async () => {
  s = await startLangGraphStack('lg_suite_parity');
  s.worker('lg-suite-parity');
});
afterAll(() => s?.close());

const refOf = (h: { metadata?: unknown; checkpoint: unknown; parent_checkpoint: unknown }) => ({
  step: (h.metadata as { step?: number } | undefined)?.step,
  checkpoint: h.checkpoint,
  parent_checkpoint: h.parent_checkpoint,
});

describe.each(SDKS)('LangGraph API suite parity (SDK %s)', (sdk) => {
  const client = () => s.client(undefined, sdk);

  it("a debug stream's checkpoint events name the checkpoints the history answers, checkpoint_map included", async () => {
    const c = client();
    const thread = await c.threads.create();
    const seen: Array<Parameters<typeof refOf>[0]> = [];
    for await (const chunk of c.runs.stream(thread.thread_id, 'echo', { input: { steps: 2 }, streamMode: 'debug' })) {
      const data = chunk.data as { type?: string; payload?: Parameters<typeof refOf>[0] };
      if (chunk.event === 'debug' && data.type === 'checkpoint' && data.payload) seen.push(data.payload);
    }
    expect(seen.length).toBeGreaterThan(2);
    const history = (await c.threads.getHistory(thread.thread_id, { limit: seen.length })).reverse();
    expect(history[0]?.checkpoint).toEqual({ thread_id: thread.thread_id, checkpoint_ns: '', checkpoint_id: expect.any(String), checkpoint_map: null });
    expect(seen.map(refOf)).toEqual(history.map(refOf));
  });

  it("the history filtered by a run's metadata answers that run's checkpoints only", async () => {
    const c = client();
    const thread = await c.threads.create();
    await c.runs.wait(thread.thread_id, 'echo', { input: { steps: 1 } });
    const all1 = await c.threads.getHistory(thread.thread_id, { limit: 100 });
    await c.runs.wait(thread.thread_id, 'echo', { input: { steps: 1 }, metadata: { run_metadata: 'second' } });
    const all = await c.threads.getHistory(thread.thread_id, { limit: 100 });
    const second = await c.threads.getHistory(thread.thread_id, { limit: 100, metadata: { run_metadata: 'second' } });
    expect(second.length).toBe(all.length - all1.length);
    expect(second.map((h) => h.checkpoint.checkpoint_id)).toEqual(all.slice(0, second.length).map((h) => h.checkpoint.checkpoint_id));
  });

  it('messages with values: each message completes after the values event that brought it, so the run ends with messages/complete', async () => {
    const c = client();
    const events: Array<{ event: string; data: unknown }> = [];
    for await (const part of c.runs.stream(null, 'chat', { input: { messages: 'abc' }, streamMode: ['messages', 'values'] })) events.push(part);
    expect(events.at(-1)?.event).toBe('messages/complete');
    expect(new Set(events.map((e) => e.event))).toEqual(new Set(['metadata', 'messages/metadata', 'messages/partial', 'messages/complete', 'values']));
    const lastValues = events.map((e) => e.event).lastIndexOf('values');
    expect(events.slice(lastValues + 1).map((e) => e.event)).toEqual(['messages/complete']);
  });
});
