// The LangGraph Server API driven by the official @langchain/langgraph-sdk Client against a real
// producer (listening), real PostgreSQL and queue, and a real worker process.

import { RunStreamLog } from '@runledger/ledger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../test/support/db';
import { KEYS, type LangGraphStack, SDKS, startLangGraphStack } from './langgraph-stack';

let s: LangGraphStack;
beforeAll(async () => {
  s = await startLangGraphStack('lg_runs');
  s.worker('lg-runs-w1');
});
afterAll(() => s?.close());

describe.each(SDKS)('LangGraph API through the SDK: runs (SDK %s)', (sdk) => {
  const sdkClient = (key?: string) => s.client(key, sdk);

  it('runs.wait on a new thread answers the final values; the run and thread read back', async () => {
    const client = sdkClient();
    const thread = await client.threads.create({ metadata: { topic: 'echo' } });
    const values = (await client.runs.wait(thread.thread_id, 'echo', { input: { steps: 3 } })) as { done: number; log: string[] };
    expect(values).toMatchObject({ done: 3, log: ['step 1', 'step 2', 'step 3'] });
    const runs = await client.runs.list(thread.thread_id);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ thread_id: thread.thread_id, status: 'success' });
    // Nobody asked to stream it: the run wrote nothing to the stream log.
    const logged = await s.db.ledger.pool.query('SELECT count(*)::int AS n FROM run_stream_events WHERE job_id = $1', [runs[0]?.run_id]);
    expect(logged.rows[0].n).toBe(0);
    const t = await client.threads.get(thread.thread_id);
    expect(t).toMatchObject({ status: 'idle', values: { done: 3 }, metadata: { topic: 'echo' } });
  });

  it('runs.stream in values, updates and messages-tuple: tokens arrive while the run is running', async () => {
    const client = sdkClient();
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
      seen.push({ event: part.event, id: (part as { id?: string }).id, data: part.data, runStatus });
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
    // Every logged chunk has an id, rising strictly; no trailing event.
    expect(seen.at(-1)?.event).toBe('values');
    const ids = seen.map((e) => Number(e.id));
    expect(ids.every((id, i) => i === 0 || id > (ids[i - 1] as number))).toBe(true);
  });

  it('runs.wait of a failing run: __error__ with raiseError false, an Error by default', async () => {
    const client = sdkClient();
    const thread = await client.threads.create();
    const answer = (await client.runs.wait(thread.thread_id, 'echo', { input: { failTimes: 5 }, raiseError: false })) as {
      __error__?: { error: string; message: string };
    };
    expect(answer.__error__).toEqual({ error: 'Error', message: 'echo: planned failure on attempt 3 of the first 5' });
    expect((await client.threads.get(thread.thread_id)).status).toBe('error');
    const again = await client.threads.create();
    await expect(client.runs.wait(again.thread_id, 'echo', { input: { failTimes: 5 } })).rejects.toThrow('Error: echo: planned failure on attempt 3');
  });

  it('background create + join; joinStream with lastEventId -1 replays the finished run, ids as first sent', async () => {
    const client = sdkClient();
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'chat', { input: { messages: 'replay me' }, streamMode: ['values', 'messages-tuple'] });
    expect(['pending', 'running']).toContain(run.status);
    const values = (await client.runs.join(thread.thread_id, run.run_id)) as { messages: Array<{ content: string }> };
    expect(values.messages.map((m) => m.content)).toEqual(['replay me', 'You said: replay me']);
    expect((await client.runs.get(thread.thread_id, run.run_id)).status).toBe('success');
    const replay = [];
    for await (const part of client.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: '-1' })) replay.push(part);
    expect(replay[0]).toMatchObject({ event: 'metadata', data: { run_id: run.run_id, attempt: 1 } });
    expect(replay.filter((p) => p.event === 'messages').length).toBe('You said: replay me'.length);
    expect(replay.at(-1)?.event).toBe('values');
    // From the middle: only what came after that id.
    const from = Number(replay[3]?.id);
    const tail = [];
    for await (const part of client.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: String(from) })) tail.push(part);
    expect(tail.map((p) => p.id)).toEqual(replay.slice(4).map((p) => p.id));
  });

  it('joinStream with stream_mode keeps only those events, in both query encodings', async () => {
    const client = sdkClient();
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'chat', { input: { messages: 'hi' }, streamMode: ['values', 'updates', 'messages-tuple'] });
    await client.runs.join(thread.thread_id, run.run_id);
    const events = [];
    for await (const part of client.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: '-1', streamMode: ['updates'] })) events.push(part.event);
    expect([...new Set(events)]).toEqual(['metadata', 'updates']);
    const path = `${s.url}/threads/${thread.thread_id}/runs/${run.run_id}/stream`;
    const asJson = await fetch(`${path}?stream_mode=${encodeURIComponent('["values","messages-tuple"]')}`, { headers: { 'x-api-key': KEYS.acme } });
    const names = [...(await asJson.text()).matchAll(/^event: (.+)$/gm)].map((m) => m[1]);
    expect([...new Set(names)]).toEqual(['metadata', 'values', 'messages']);
    const bad = await fetch(`${path}?stream_mode=everything`, { headers: { 'x-api-key': KEYS.acme } });
    expect(bad.status).toBe(400);
  });

  it('on_disconnect cancel: a streaming client that goes away cancels its run', async () => {
    const client = sdkClient();
    const thread = await client.threads.create();
    const stop = new AbortController();
    let runId: string | undefined;
    const parts = client.runs.stream(thread.thread_id, 'chat', {
      input: { messages: 'a long enough message to stop in the middle', tokenDelayMs: 100 },
      streamMode: 'messages-tuple',
      onDisconnect: 'cancel',
      signal: stop.signal,
      onRunCreated: (m) => {
        runId = m.run_id;
      },
    });
    // The SDK ends the loop quietly once its signal aborts; the connection closes.
    for await (const part of parts) if (part.event === 'messages') stop.abort();
    const run = await waitFor('the run to stop', async () => {
      const r = await client.runs.get(thread.thread_id, runId as string);
      return r.status === 'interrupted' ? r : undefined;
    });
    expect(run.status).toBe('interrupted');
  });

  it('legacy messages mode: messages/metadata, messages/partial (the message so far), messages/complete', async () => {
    const client = sdkClient();
    const parts = [];
    for await (const part of client.runs.stream(null, 'chat', { input: { messages: 'abc' }, streamMode: 'messages' })) parts.push(part);
    const partial = parts.filter((p) => p.event === 'messages/partial').map((p) => (p.data as unknown as [{ content: string }])[0].content);
    expect(partial.at(-1)).toBe('You said: abc');
    expect(partial[1]).toBe('Yo');
    expect(parts.some((p) => p.event === 'messages/metadata')).toBe(true);
    const complete = parts.filter((p) => p.event === 'messages/complete').flatMap((p) => p.data as Array<{ content: string }>);
    expect(complete.map((m) => m.content)).toEqual(['abc', 'You said: abc']);
  });

  it('multitask: reject answers 409 while the thread is busy; enqueue runs after it; cancel stops a run', async () => {
    const client = sdkClient();
    const thread = await client.threads.create();
    const first = await client.runs.create(thread.thread_id, 'echo', { input: { steps: 2, sleepMs: 400 } });
    await expect(client.runs.create(thread.thread_id, 'echo', { input: {} })).rejects.toThrow(/409/);
    const second = await client.runs.create(thread.thread_id, 'echo', { input: { steps: 1 }, multitaskStrategy: 'enqueue' });
    // The thread's state carries on: the second run adds one step to the first run's two.
    expect((await client.runs.join(thread.thread_id, second.run_id)) as { done: number }).toMatchObject({ done: 3 });
    expect((await client.runs.get(thread.thread_id, first.run_id)).status).toBe('success');
    const slow = await client.runs.create(thread.thread_id, 'echo', { input: { steps: 1, sleepMs: 30_000 } });
    await client.runs.cancel(thread.thread_id, slow.run_id, true);
    expect((await client.runs.get(thread.thread_id, slow.run_id)).status).toBe('interrupted');
    expect((await client.runs.list(thread.thread_id)).map((r) => r.run_id)).toEqual([slow.run_id, second.run_id, first.run_id]);
  });

  it('cancel hands the thread on: a run waiting behind the cancelled one is delivered before the answer', async () => {
    const client = sdkClient();
    const thread = await client.threads.create();
    const held = await client.runs.create(thread.thread_id, 'echo', { input: { steps: 1, sleepMs: 6_000 } });
    await waitFor('the slow run to start', async () => (await client.runs.get(thread.thread_id, held.run_id)).status === 'running');
    const next = await client.runs.create(thread.thread_id, 'echo', { input: { steps: 1, sleepMs: 0 }, multitaskStrategy: 'enqueue' });
    // Refused while the slow run holds the thread, the run waits in the ledger without a delivery.
    await waitFor('the run to wait for its thread', async () => (await s.db.ledger.events(next.run_id)).some((e) => e.type === 'waiting_for_thread'));
    const before = (await s.db.ledger.get(next.run_id)).deliveries;
    await client.runs.cancel(thread.thread_id, held.run_id);
    expect((await s.db.ledger.get(next.run_id)).deliveries).toBe(before + 1);
    expect(await client.runs.join(thread.thread_id, next.run_id)).toMatchObject({ done: 1 });
  });

  it('multitask interrupt: the running run is cancelled (interrupted), the new one runs; a parked run too', async () => {
    const client = sdkClient();
    const thread = await client.threads.create();
    // Long enough to be cancelled mid-run (it would end 'success' otherwise), short enough not to hold the test.
    const slow = await client.runs.create(thread.thread_id, 'echo', { input: { steps: 1, sleepMs: 6_000 } });
    await waitFor('the slow run to start', async () => (await client.runs.get(thread.thread_id, slow.run_id)).status === 'running');
    // An interrupted run keeps what it checkpointed, its input included: without sleepMs 0 the new
    // run would inherit the slow run's 6 s sleep from the thread's state (echo's channels keep the last value).
    const next = await client.runs.create(thread.thread_id, 'echo', { input: { steps: 1, sleepMs: 0 }, multitaskStrategy: 'interrupt' });
    expect(await client.runs.join(thread.thread_id, next.run_id)).toMatchObject({ done: 1, sleepMs: 0 });
    expect((await client.runs.get(thread.thread_id, slow.run_id)).status).toBe('interrupted');

    const hitl = await client.threads.create();
    await client.runs.wait(hitl.thread_id, 'approval', { input: { request: 'x' } });
    const fresh = await client.runs.wait(hitl.thread_id, 'approval', { input: { request: 'y' }, multitaskStrategy: 'interrupt' });
    expect(fresh).toHaveProperty('__interrupt__');
    expect((await client.runs.list(hitl.thread_id)).map((r) => r.status)).toEqual(['interrupted', 'interrupted']);
    expect((await client.threads.get(hitl.thread_id)).status).toBe('interrupted');
  });

  it('x-api-key: another tenant sees neither the thread nor its runs; no key is refused', async () => {
    const acme = sdkClient();
    const thread = await acme.threads.create();
    await expect(sdkClient(KEYS.globex).threads.get(thread.thread_id)).rejects.toThrow(/404/);
    await expect(sdkClient('wrong-key-0123456789abcdefgh').threads.get(thread.thread_id)).rejects.toThrow(/401/);
    expect((await sdkClient(KEYS.globex).threads.search({ ids: [thread.thread_id] })).length).toBe(0);
    // Nor its runs, their results or their streams; nor may it run on the thread.
    const run = await acme.runs.create(thread.thread_id, 'echo', { input: {}, streamMode: 'values' });
    await acme.runs.join(thread.thread_id, run.run_id);
    const globex = sdkClient(KEYS.globex);
    await expect(globex.runs.get(thread.thread_id, run.run_id)).rejects.toThrow(/404/);
    await expect(globex.runs.join(thread.thread_id, run.run_id)).rejects.toThrow(/404/);
    await expect(globex.runs.list(thread.thread_id)).rejects.toThrow(/404/);
    await expect(globex.runs.wait(thread.thread_id, 'echo', { input: {} })).rejects.toThrow(/404/);
    await expect(
      (async () => {
        for await (const _ of globex.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: '-1' })) void _;
      })(),
    ).rejects.toThrow(/404/);
  });

  it('a finished run whose log retention removed: joinStream answers metadata and its final values', async () => {
    const client = sdkClient();
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'chat', { input: { messages: 'gone' }, streamMode: 'messages-tuple' });
    await client.runs.join(thread.thread_id, run.run_id);
    expect(await new RunStreamLog(s.db.ledger.pool).expire(0)).toBeGreaterThan(0);
    const parts = [];
    for await (const part of client.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: '-1' })) parts.push(part);
    expect(parts.map((p) => p.event)).toEqual(['metadata', 'values']);
    expect((parts[1]?.data as { messages: Array<{ content: string }> } | undefined)?.messages.map((m) => m.content)).toEqual(['gone', 'You said: gone']);
  });

  it('afterSeconds: the run waits in the ledger until its due time, then runs; with command.resume it is refused', async () => {
    const client = sdkClient();
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'echo', { input: { steps: 1 }, afterSeconds: 2 });
    const row = async () =>
      (await s.db.ledger.pool.query('SELECT status, accepted_at, run_after, started_at FROM jobs WHERE job_id = $1', [run.run_id])).rows[0];
    const admitted = await row();
    expect(admitted.status).toBe('accepted');
    expect(admitted.run_after.getTime() - admitted.accepted_at.getTime()).toBeGreaterThanOrEqual(1_900);
    await client.runs.join(thread.thread_id, run.run_id);
    const done = await row();
    expect(done.status).toBe('completed');
    // Started by the database clock no earlier than its due time.
    expect(done.started_at.getTime()).toBeGreaterThanOrEqual(admitted.run_after.getTime());
    await expect(client.runs.create(thread.thread_id, 'echo', { command: { resume: 'x' }, afterSeconds: 1 })).rejects.toThrow(/422/);
  });
});

// Raw HTTP, the same for every SDK version: run once.
describe('LangGraph API on the wire', () => {
  it('a wait longer than a second keeps its connection busy with newlines before the values', async () => {
    const thread = await s.client().threads.create();
    const r = await fetch(`${s.url}/threads/${thread.thread_id}/runs/wait`, {
      method: 'POST',
      headers: { 'x-api-key': KEYS.acme, 'content-type': 'application/json' },
      body: JSON.stringify({ assistant_id: 'echo', input: { steps: 1, sleepMs: 2_500 } }),
    });
    expect(r.status).toBe(200);
    const text = await r.text();
    expect(text).toMatch(/^\n\n+\{/);
    expect(JSON.parse(text)).toMatchObject({ done: 1 });
  });

  it('SSE on the wire: headers at once, `: ping` lines while the run works, each a line of its own', async () => {
    const thread = await s.client().threads.create();
    const started = Date.now();
    const r = await fetch(`${s.url}/threads/${thread.thread_id}/runs/stream`, {
      method: 'POST',
      headers: { 'x-api-key': KEYS.acme, 'content-type': 'application/json' },
      body: JSON.stringify({ assistant_id: 'echo', input: { steps: 1, sleepMs: 4_500 } }),
    });
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(r.headers.get('content-type')).toBe('text/event-stream');
    expect(r.headers.get('location')).toMatch(new RegExp(`^/threads/${thread.thread_id}/runs/[0-9a-f-]{36}/stream$`));
    expect(r.headers.get('content-location')).toBe(r.headers.get('location')?.replace(/\/stream$/, ''));
    const text = await r.text();
    expect(text).toMatch(/\n: ping\n(?!\n)/);
    expect(text).not.toContain(': ping\n\n');
    // It ends with the run's last chunk (values), as LangGraph's server does: no trailing event.
    expect(text).not.toContain('event: end');
    expect(text.trimEnd().split('\n\n').at(-1)).toMatch(/^(id: \d+\n)?event: values\n/m);
  });
});
