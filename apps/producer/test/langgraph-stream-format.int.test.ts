// The SSE wire format of run streams as LangGraph's server writes it, through the official SDK
// (1.x and 2.x): no trailing event, ids counted from 0 per run, rising strictly within a stream and across reconnects,
// the `events` mode, and debug / checkpoints payloads without Runledger's run context.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LangGraphStack, SDKS, startLangGraphStack } from './langgraph-stack';

let s: LangGraphStack;
beforeAll(async () => {
  s = await startLangGraphStack('lg_stream_format');
  s.worker('lg-format-w1');
});
afterAll(() => s?.close());

type Part = { id?: string; event: string; data: unknown };

async function collect(parts: AsyncIterable<unknown>): Promise<Part[]> {
  const out: Part[] = [];
  for await (const p of parts) out.push(p as Part);
  return out;
}

const rising = (ids: Array<string | undefined>) => ids.every((id, i) => id !== undefined && (i === 0 || Number(id) > Number(ids[i - 1])));

describe.each(SDKS)('stream wire format (SDK %s)', (sdk) => {
  it('a stream ends with its last chunk, no trailing event; every id rises, also after a reconnect', async () => {
    const client = s.client(undefined, sdk);
    const thread = await client.threads.create();
    let runId = '';
    const parts = await collect(
      client.runs.stream(thread.thread_id, 'chat', {
        input: { messages: 'ids only rise' },
        streamMode: ['values', 'messages-tuple'],
        onRunCreated: (m) => {
          runId = m.run_id;
        },
      }),
    );
    expect(parts.map((p) => p.event)).not.toContain('end');
    expect(parts.at(-1)?.event).toBe('values');
    // Counted from 0 within the run, as LangGraph's server counts a run's events.
    expect(parts.map((p) => p.id)).toEqual(parts.map((_, i) => String(i)));
    // Reconnecting after the fifth event: the rest, each id above the one named.
    const after = parts[4]?.id as string;
    const rest = await collect(client.runs.joinStream(thread.thread_id, runId, { lastEventId: after }));
    expect(rest.map((p) => p.id)).toEqual(parts.slice(5).map((p) => p.id));
    // After the last one: nothing.
    expect(await collect(client.runs.joinStream(thread.thread_id, runId, { lastEventId: parts.at(-1)?.id }))).toEqual([]);
  });

  it("a failed run's error event has an id of its own, above the last chunk's; after it nothing follows", async () => {
    const client = s.client(undefined, sdk);
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'echo', { input: { failTimes: 5 }, streamMode: 'values' });
    const parts = await collect(client.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: '-1' }));
    const last = parts.at(-1);
    expect(last).toMatchObject({ event: 'error', data: { error: 'Error', message: expect.stringContaining('planned failure') } });
    expect(rising(parts.map((p) => p.id))).toBe(true);
    expect(await collect(client.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: last?.id }))).toEqual([]);
    // A client that missed only the error gets it again, with an id above what it saw.
    const before = parts.at(-2)?.id as string;
    const again = await collect(client.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: before }));
    expect(again.map((p) => p.event)).toEqual(['error']);
    expect(again[0]?.id).toBe(String(Number(before) + 1));
  });

  it('stream_mode events: streamEvents v2 events as LangGraph streams them', async () => {
    const client = s.client(undefined, sdk);
    const thread = await client.threads.create();
    const parts = await collect(client.runs.stream(thread.thread_id, 'chat', { input: { messages: 'evt' }, streamMode: 'events' }));
    expect(new Set(parts.map((p) => p.event))).toEqual(new Set(['metadata', 'events']));
    const events = parts.filter((p) => p.event === 'events').map((p) => p.data as { event: string; name: string; run_id: string; data: unknown });
    const kinds = new Set(events.map((e) => e.event));
    for (const k of ['on_chain_start', 'on_chain_end', 'on_chat_model_start', 'on_chat_model_stream', 'on_chat_model_end']) expect(kinds).toContain(k);
    // The graph's own output chunks are not events (they are the stream modes').
    expect(events.some((e) => e.event === 'on_chain_stream' && e.name === 'LangGraph')).toBe(false);
    const tokens = events.filter((e) => e.event === 'on_chat_model_stream').map((e) => (e.data as { chunk: { content: string } }).chunk.content);
    expect(tokens.join('')).toBe('You said: evt');
    expect(JSON.stringify(events)).not.toMatch(/runledger|fencingToken/);
  });

  it("debug, checkpoints and tasks stream (the run succeeds) without Runledger's run context, with the client's thread id", async () => {
    const client = s.client(undefined, sdk);
    const thread = await client.threads.create();
    const parts = await collect(client.runs.stream(thread.thread_id, 'echo', { input: { steps: 1 }, streamMode: ['debug', 'checkpoints', 'tasks'] }));
    expect(parts.map((p) => p.event)).not.toContain('error');
    const text = JSON.stringify(parts);
    expect(text).not.toMatch(/runledger|fencingToken|"ledger"|"signal"|"callbacks"|"control"/);
    // Every thread id in a payload is the client's, never the worker's tenant-scoped one.
    const threadIds = [...text.matchAll(/"thread_id":"([^"]+)"/g)].map((m) => m[1]);
    expect(threadIds.length).toBeGreaterThan(0);
    expect(new Set(threadIds)).toEqual(new Set([thread.thread_id]));
    // The last checkpoint has a parent (the first one has none, and no parent_config, as in LangGraph).
    const checkpoint = parts.filter((p) => p.event === 'checkpoints').at(-1)?.data as Record<string, unknown>;
    expect(checkpoint).toMatchObject({ values: expect.any(Object), next: expect.any(Array), metadata: expect.any(Object) });
    expect(checkpoint.parent_config).toMatchObject({ configurable: { thread_id: thread.thread_id } });
    expect(checkpoint.parent_checkpoint).toMatchObject({ thread_id: thread.thread_id, checkpoint_id: expect.any(String) });
    expect(checkpoint.checkpoint).toMatchObject({ thread_id: thread.thread_id, checkpoint_id: expect.any(String) });
    const debug = parts.find((p) => p.event === 'debug' && (p.data as { type: string }).type === 'checkpoint')?.data as { payload: Record<string, unknown> };
    expect(debug.payload.checkpoint).toMatchObject({ thread_id: thread.thread_id });
    expect(parts.some((p) => p.event === 'tasks')).toBe(true);
    expect((await client.threads.get(thread.thread_id)).values).toMatchObject({ done: 1 });
  });
});
