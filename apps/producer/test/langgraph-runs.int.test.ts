// The LangGraph Server API driven by the official @langchain/langgraph-sdk Client against a real
// producer (listening), real PostgreSQL and queue, and a real worker process.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, type LangGraphStack, startLangGraphStack } from './langgraph-stack';

describe('LangGraph API through the SDK: runs', () => {
  let s: LangGraphStack;
  beforeAll(async () => {
    s = await startLangGraphStack('lg_runs');
    s.worker('lg-runs-w1');
  });
  afterAll(() => s?.close());

  it('runs.wait on a new thread answers the final values; the run and thread read back', async () => {
    const client = s.client();
    const thread = await client.threads.create({ metadata: { topic: 'echo' } });
    const values = (await client.runs.wait(thread.thread_id, 'echo', { input: { steps: 3 } })) as { done: number; log: string[] };
    expect(values).toMatchObject({ done: 3, log: ['step 1', 'step 2', 'step 3'] });
    const runs = await client.runs.list(thread.thread_id);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ thread_id: thread.thread_id, status: 'success' });
    const t = await client.threads.get(thread.thread_id);
    expect(t).toMatchObject({ status: 'idle', values: { done: 3 }, metadata: { topic: 'echo' } });
  });

  it('runs.stream in values, updates and messages-tuple: tokens arrive while the run is running', async () => {
    const client = s.client();
    const thread = await client.threads.create();
    const seen: Array<{ event: string; id?: string; data: unknown; runStatus?: string }> = [];
    let runId: string | undefined;
    for await (const part of client.runs.stream(thread.thread_id, 'chat', {
      input: { messages: [{ role: 'user', content: 'hello there' }], tokenDelayMs: 20 },
      streamMode: ['values', 'updates', 'messages-tuple'],
      onRunCreated: (m) => {
        runId = m.run_id;
      },
    })) {
      const first = part.event === 'messages' && !seen.some((e) => e.event === 'messages');
      const runStatus = first && runId ? (await client.runs.get(thread.thread_id, runId)).status : undefined;
      seen.push({ event: part.event, id: part.id, data: part.data, runStatus });
    }
    expect(seen[0]?.event).toBe('metadata');
    expect(seen[0]?.data).toMatchObject({ run_id: runId, attempt: 1 });
    const tokens = seen.filter((e) => e.event === 'messages');
    expect(tokens.length).toBeGreaterThan(10);
    expect(tokens[0]?.runStatus).toBe('running');
    const text = tokens.map((e) => (e.data as [{ content: string }])[0].content).join('');
    expect(text).toBe('You said: hello there');
    expect(seen.some((e) => e.event === 'updates')).toBe(true);
    const lastValues = seen.filter((e) => e.event === 'values').at(-1)?.data as { messages: Array<{ content: string }> };
    expect(lastValues.messages.map((m) => m.content)).toEqual(['hello there', 'You said: hello there']);
    // Every logged chunk has an id, rising strictly; `end` carries none (the SSE parser repeats the last).
    expect(seen.at(-1)?.event).toBe('end');
    const ids = seen.slice(0, -1).map((e) => Number(e.id));
    expect(ids.every((id, i) => i === 0 || id > (ids[i - 1] as number))).toBe(true);
  });

  it('x-api-key: another tenant sees neither the thread nor its runs; no key is refused', async () => {
    const acme = s.client();
    const thread = await acme.threads.create();
    await expect(s.client(KEYS.globex).threads.get(thread.thread_id)).rejects.toThrow(/404/);
    await expect(s.client('wrong-key-0123456789abcdefgh').threads.get(thread.thread_id)).rejects.toThrow(/401/);
    expect((await s.client(KEYS.globex).threads.search({ ids: [thread.thread_id] })).length).toBe(0);
  });
});
