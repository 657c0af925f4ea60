// Bounds on thread state through the official SDK: a per-thread state size (413 naming it, nothing
// written) and a byte budget per history answer, continued with LangGraph's `before` cursor.

import { Client } from '@langchain/langgraph-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, type LangGraphStack, startLangGraphStack } from './langgraph-stack';

let s: LangGraphStack;
let url: string;
beforeAll(async () => {
  s = await startLangGraphStack('lg_state_limits');
  s.worker('lg-state-limits-w1');
  ({ url } = await s.producer({ threadState: { maxBytes: 500_000, historyMaxBytes: 250_000 } }));
});
afterAll(() => s?.close());

const client = () => new Client({ apiUrl: url, apiKey: KEYS.acme, callerOptions: { maxRetries: 0 } });
const message = (n: number, kb: number) => ({ messages: [{ type: 'human', content: `${n}:${'x'.repeat(kb * 1024)}` }] });

describe('thread state bounds', () => {
  it('an update past MAX_THREAD_STATE_BYTES answers 413 naming it, and writes nothing', async () => {
    const c = client();
    const thread = await c.threads.create();
    await c.runs.wait(thread.thread_id, 'chat', { input: { messages: 'start' } });
    await c.threads.updateState(thread.thread_id, { values: message(1, 300) });
    const before = await c.threads.getHistory(thread.thread_id, { limit: 100 });
    const refused = await fetch(`${url}/threads/${thread.thread_id}/state`, {
      method: 'POST',
      headers: { 'x-api-key': KEYS.acme, 'content-type': 'application/json' },
      body: JSON.stringify({ values: message(2, 300) }),
    });
    expect(refused.status).toBe(413);
    expect(((await refused.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'state_too_large',
      message: expect.stringContaining('MAX_THREAD_STATE_BYTES'),
    });
    await expect(c.threads.updateState(thread.thread_id, { values: message(3, 300) })).rejects.toThrow(/413/);
    expect(await c.threads.getHistory(thread.thread_id, { limit: 100 })).toHaveLength(before.length);
    const state = (await c.threads.getState(thread.thread_id)).values as { messages: Array<{ content: string }> };
    expect(state.messages.map((m) => m.content.slice(0, 2))).toEqual(['st', 'Yo', '1:']);
  });

  it('a history answer stops at HISTORY_MAX_BYTES; X-Pagination-Next is the `before` that continues it, to the same list', async () => {
    const c = client();
    const thread = await c.threads.create();
    await c.runs.wait(thread.thread_id, 'chat', { input: { messages: 'start' } });
    // Snapshots of about 0, 100, 200, 300 and 400 kB.
    for (let n = 1; n <= 4; n++) await c.threads.updateState(thread.thread_id, { values: message(n, 100) });
    const all = await s.client().threads.getHistory(thread.thread_id, { limit: 1000 });
    const ids = all.map((h) => h.checkpoint.checkpoint_id);
    const pages: string[][] = [];
    let before: string | undefined;
    do {
      const r = await fetch(`${url}/threads/${thread.thread_id}/history`, {
        method: 'POST',
        headers: { 'x-api-key': KEYS.acme, 'content-type': 'application/json' },
        body: JSON.stringify({ limit: 1000, ...(before ? { before: { configurable: { checkpoint_id: before } } } : {}) }),
      });
      const text = await r.text();
      const page = (JSON.parse(text) as Array<{ checkpoint: { checkpoint_id: string } }>).map((h) => h.checkpoint.checkpoint_id);
      // One snapshot may exceed the budget alone; more than one never does.
      if (page.length > 1) expect(Buffer.byteLength(text)).toBeLessThanOrEqual(250_000);
      pages.push(page);
      before = r.headers.get('x-pagination-next') ?? undefined;
      if (before) expect(before).toBe(page.at(-1));
    } while (before);
    expect(pages.length).toBeGreaterThan(2);
    expect(pages.flat()).toEqual(ids);
  });
});

describe('updates LangChain cannot coerce', () => {
  const shapes: Array<[string, unknown]> = [
    ['an object with neither type nor role', [{ foo: 'bar' }]],
    ['an unknown role', [{ role: 'wizard', content: 'secret-content-1' }]],
    [
      'a serialized lc object of no message class',
      [{ lc: 1, type: 'constructor', id: ['langchain_core', 'messages', 'WizardMessage'], kwargs: { content: 'secret-content-2' } }],
    ],
    ['a serialized lc secret', [{ lc: 1, type: 'secret', id: ['OPENAI_API_KEY'] }]],
    ['a tool message without tool_call_id', [{ type: 'tool', content: 'secret-content-3' }]],
  ];
  it.each(shapes)('%s: 422 invalid_update, without the content, nothing written', async (_, messages) => {
    const c = s.client();
    const thread = await c.threads.create();
    await c.runs.wait(thread.thread_id, 'chat', { input: { messages: 'start' } });
    const before = await c.threads.getHistory(thread.thread_id, { limit: 100 });
    const r = await fetch(`${s.url}/threads/${thread.thread_id}/state`, {
      method: 'POST',
      headers: { 'x-api-key': KEYS.acme, 'content-type': 'application/json' },
      body: JSON.stringify({ values: { messages } }),
    });
    expect(r.status).toBe(422);
    const body = (await r.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('invalid_update');
    expect(body.error.message).not.toContain('secret-content');
    await expect(c.threads.updateState(thread.thread_id, { values: { messages } })).rejects.toThrow(/422/);
    expect(await c.threads.getHistory(thread.thread_id, { limit: 100 })).toHaveLength(before.length);
  });
});
