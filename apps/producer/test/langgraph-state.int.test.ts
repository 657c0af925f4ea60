// Thread-state updates, commands and breakpoints through the official LangGraph SDK Client against
// a real producer, PostgreSQL, queue and worker process.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../test/support/db';
import { KEYS, type LangGraphStack, SDKS, startLangGraphStack } from './langgraph-stack';

const APP_ORIGIN = 'http://app.example:5173';
let s: LangGraphStack;
beforeAll(async () => {
  s = await startLangGraphStack('lg_state', { cors: { origins: [APP_ORIGIN] } });
  s.worker('lg-state-w1');
});
afterAll(() => s?.close());

type Chat = { messages: Array<{ type: string; content: string }> };
const contents = (v: Chat) => v.messages.map((m) => [m.type, m.content]);

describe.each(SDKS)('LangGraph API through the SDK: state updates (SDK %s)', (sdk) => {
  const sdkClient = (key?: string) => s.client(key, sdk);

  it('updateState writes a checkpoint getState and getHistory read back; the next run continues from it', async () => {
    const client = sdkClient();
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, 'chat', { input: { messages: 'one' } });
    const written = (await client.threads.updateState(thread.thread_id, { values: { messages: [{ type: 'human', content: 'edited' }] } })) as {
      checkpoint: { checkpoint_id: string; thread_id: string };
    };
    expect(written.checkpoint.thread_id).toBe(thread.thread_id);
    const state = await client.threads.getState<Chat>(thread.thread_id);
    expect(state.checkpoint?.checkpoint_id).toBe(written.checkpoint.checkpoint_id);
    expect(contents(state.values)).toEqual([
      ['human', 'one'],
      ['ai', 'You said: one'],
      ['human', 'edited'],
    ]);
    const [newest, before] = await client.threads.getHistory(thread.thread_id, { limit: 2 });
    expect(newest?.checkpoint?.checkpoint_id).toBe(written.checkpoint.checkpoint_id);
    expect(newest?.metadata).toMatchObject({ source: 'update' });
    expect(newest?.parent_checkpoint?.checkpoint_id).toBe(before?.checkpoint?.checkpoint_id);
    expect((await client.threads.get<Chat>(thread.thread_id)).values.messages).toHaveLength(3);

    const next = (await client.runs.wait(thread.thread_id, 'chat', { input: { messages: 'two' } })) as Chat;
    expect(contents(next).slice(2)).toEqual([
      ['human', 'edited'],
      ['human', 'two'],
      ['ai', 'You said: two'],
    ]);
  });

  it('updateState as_node on an interrupted thread: the node counts as done, resume runs what follows it', async () => {
    const client = sdkClient();
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, 'approval', { input: { request: 'a bike' } });
    expect((await client.threads.getState(thread.thread_id)).next).toEqual(['review']);
    await client.threads.updateState(thread.thread_id, { values: { decision: 'approved by hand' }, asNode: 'review' });
    const state = await client.threads.getState(thread.thread_id);
    expect([state.next, state.tasks.flatMap((t) => t.interrupts)]).toEqual([['finish'], []]);
    const done = await client.runs.wait(thread.thread_id, 'approval', { command: { resume: { approved: false } } });
    // review did not run again: the hand-written decision stands, the resume value is unused.
    expect(done).toMatchObject({ outcome: 'a bike: approved by hand' });
  });

  it('updateState is refused with 409 while a run holds the thread, and writes nothing', async () => {
    const client = sdkClient();
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'echo', { input: { steps: 2, sleepMs: 1_500 } });
    await waitFor('the run to checkpoint', async () => (await client.runs.get(thread.thread_id, run.run_id)).status === 'running');
    const before = await client.threads.getHistory(thread.thread_id, { limit: 100 });
    await expect(client.threads.updateState(thread.thread_id, { values: { log: ['sneaked in'] } })).rejects.toThrow(/409/);
    const r = await fetch(`${s.url}/threads/${thread.thread_id}/state`, {
      method: 'POST',
      headers: { 'x-api-key': KEYS.acme, 'content-type': 'application/json' },
      body: JSON.stringify({ values: { log: ['sneaked in'] } }),
    });
    expect([r.status, ((await r.json()) as { error: { code: string } }).error.code]).toEqual([409, 'thread_busy']);
    const after = await client.runs.join(thread.thread_id, run.run_id);
    expect(after).toMatchObject({ done: 2, log: ['step 1', 'step 2'] });
    const history = await client.threads.getHistory(thread.thread_id, { limit: 100 });
    expect(history.filter((h) => h.metadata?.source === 'update')).toEqual([]);
    expect(history.length).toBeGreaterThan(before.length);
  });

  it('bad updates: unknown node 422, a thread without a graph 409, another tenant 404; nothing written', async () => {
    const client = sdkClient();
    const thread = await client.threads.create();
    await expect(client.threads.updateState(thread.thread_id, { values: { messages: 'x' } })).rejects.toThrow(/409/);
    await client.runs.wait(thread.thread_id, 'chat', { input: { messages: 'one' } });
    const before = await client.threads.getHistory(thread.thread_id, { limit: 100 });
    await expect(client.threads.updateState(thread.thread_id, { values: { messages: 'x' }, asNode: 'nowhere' })).rejects.toThrow(/422/);
    await expect(sdkClient(KEYS.globex).threads.updateState(thread.thread_id, { values: { messages: 'x' } })).rejects.toThrow(/404/);
    expect(await client.threads.getHistory(thread.thread_id, { limit: 100 })).toHaveLength(before.length);
  });
});

describe.each(SDKS)('LangGraph API through the SDK: command and breakpoints (SDK %s)', (sdk) => {
  const sdkClient = (key?: string) => s.client(key, sdk);

  it('command update + goto: a run that starts from the thread state at the named node', async () => {
    const client = sdkClient();
    const thread = await client.threads.create();
    expect(await client.runs.wait(thread.thread_id, 'echo', { input: { steps: 1 } })).toMatchObject({ done: 1 });
    const run = await client.runs.create(thread.thread_id, 'echo', { command: { update: { steps: 3 }, goto: 'step' } });
    expect((run as unknown as { kwargs: unknown }).kwargs).toMatchObject({ command: { update: { steps: 3 }, goto: ['step'] } });
    expect(await client.runs.join(thread.thread_id, run.run_id)).toMatchObject({ done: 3, log: ['step 1', 'step 2', 'step 3'] });
  });

  it('command resume + update: the interrupted run continues with the updated state', async () => {
    const client = sdkClient();
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, 'approval', { input: { request: 'a car' } });
    const done = await client.runs.wait(thread.thread_id, 'approval', { command: { resume: { approved: true }, update: { request: 'a yacht' } } });
    expect(done).toMatchObject({ request: 'a yacht', decision: 'approved', outcome: 'a yacht: approved' });
    expect(await client.runs.list(thread.thread_id)).toHaveLength(1);
  });

  it('interrupt_after parks the run at the breakpoint (thread interrupted, next step pending); command resume finishes it', async () => {
    const client = sdkClient();
    const thread = await client.threads.create();
    const paused = await client.runs.wait(thread.thread_id, 'echo', { input: { steps: 2 }, interruptAfter: ['step'] });
    expect(paused).toMatchObject({ done: 1, log: ['step 1'] });
    const [run] = await client.runs.list(thread.thread_id);
    expect([run?.status, (await client.threads.get(thread.thread_id)).status]).toEqual(['interrupted', 'interrupted']);
    expect((await client.threads.getState(thread.thread_id)).next).toEqual(['step']);
    const parts = [];
    for await (const part of client.runs.stream(thread.thread_id, 'echo', { command: { resume: null } })) parts.push(part);
    expect(parts.filter((p) => p.event === 'values').at(-1)?.data).toMatchObject({ done: 2, log: ['step 1', 'step 2'] });
    expect((await client.runs.get(thread.thread_id, run?.run_id as string)).status).toBe('success');
    expect((await client.threads.getState(thread.thread_id)).values).toMatchObject({ done: 2, log: ['step 1', 'step 2'] });
  });

  it('interrupt_before "*" stops before the first node; bad commands answer 422 and admit nothing; a breakpoint on no node is ignored', async () => {
    const client = sdkClient();
    const thread = await client.threads.create();
    expect(await client.runs.wait(thread.thread_id, 'chat', { input: { messages: 'hi' }, interruptBefore: '*' })).toMatchObject({
      messages: [{ content: 'hi' }],
    });
    expect((await client.threads.getState(thread.thread_id)).next).toEqual(['reply']);
    const other = await client.threads.create();
    const before = (await s.db.ledger.list({ limit: 500 })).jobs.length;
    await expect(client.runs.create(other.thread_id, 'echo', { command: { goto: 'nowhere' } })).rejects.toThrow(/422/);
    await expect(client.runs.create(other.thread_id, 'echo', { input: {}, command: { goto: 'step' } })).rejects.toThrow(/422/);
    expect((await s.db.ledger.list({ limit: 500 })).jobs.length).toBe(before);
    // As on LangGraph's server, breakpoints naming no node of the graph (a subgraph's node, say) never stop the run.
    const unstopped = await client.threads.create();
    const values = await client.runs.wait(unstopped.thread_id, 'echo', { input: { steps: 1 }, interruptBefore: ['nowhere'], interruptAfter: ['nowhere'] });
    expect(values).toMatchObject({ done: 1 });
    expect((await client.threads.getState(unstopped.thread_id)).next).toEqual([]);
  });
});

describe.each(SDKS)('LangGraph API through the SDK: rollback (SDK %s)', (sdk) => {
  const sdkClient = (key?: string) => s.client(key, sdk);
  const streamRows = async (runId: string) =>
    (await s.db.ledger.pool.query('SELECT count(*)::int AS n FROM run_stream_events WHERE job_id = $1', [runId])).rows[0].n;

  /** A thread with one finished echo step, and a slow run on it that has checkpointed its input and its first step, and streamed them. */
  async function threadWithSlowRun() {
    const client = sdkClient();
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, 'echo', { input: { steps: 1 } });
    const history = await client.threads.getHistory(thread.thread_id, { limit: 100 });
    const slow = await client.runs.create(thread.thread_id, 'echo', { input: { steps: 3, sleepMs: 1_500 }, streamMode: 'values' });
    await waitFor(
      'the slow run to checkpoint and stream',
      async () => (await client.runs.get(thread.thread_id, slow.run_id)).status === 'running' && (await streamRows(slow.run_id)) > 2,
    );
    return { client, thread, history, slow };
  }

  /** The thread is as before the slow run, stays so after its stale attempt wakes up, and carries on from there. */
  async function expectRolledBack(t: Awaited<ReturnType<typeof threadWithSlowRun>>) {
    const { client, thread, history, slow } = t;
    await expect(client.runs.get(thread.thread_id, slow.run_id)).rejects.toThrow(/404/);
    expect((await client.runs.list(thread.thread_id)).map((r) => r.run_id)).not.toContain(slow.run_id);
    expect(await streamRows(slow.run_id)).toBe(0);
    // The ledger keeps the job as a receipt, cancelled.
    expect((await s.db.ledger.get(slow.run_id)).status).toBe('cancelled');
    // Its attempt was mid-step: whatever it tries after the rollback is refused by the fence.
    await new Promise((r) => setTimeout(r, 1_800));
    const after = await client.threads.getHistory(thread.thread_id, { limit: 100 });
    expect(after.map((h) => h.checkpoint?.checkpoint_id)).toEqual(history.map((h) => h.checkpoint?.checkpoint_id));
    const values = (await client.threads.getState(thread.thread_id)).values as Record<string, unknown>;
    expect([values.done, values.log, values.sleepMs]).toEqual([1, ['step 1'], undefined]);
  }

  it('cancel with action rollback deletes the run, its checkpoints and stream log; the thread carries on from before it', async () => {
    const t = await threadWithSlowRun();
    await t.client.runs.cancel(t.thread.thread_id, t.slow.run_id, true, 'rollback');
    await expectRolledBack(t);
    expect(await t.client.runs.wait(t.thread.thread_id, 'echo', { input: { steps: 2 } })).toMatchObject({ done: 2, log: ['step 1', 'step 2'] });
  });

  it('multitask rollback: the running run is rolled back, the new one runs on the state before it', async () => {
    const t = await threadWithSlowRun();
    const next = await t.client.runs.create(t.thread.thread_id, 'echo', { input: { steps: 2 }, multitaskStrategy: 'rollback' });
    expect(await t.client.runs.join(t.thread.thread_id, next.run_id)).toMatchObject({ done: 2, log: ['step 1', 'step 2'] });
    await expect(t.client.runs.get(t.thread.thread_id, t.slow.run_id)).rejects.toThrow(/404/);
    expect(await streamRows(t.slow.run_id)).toBe(0);
    // The slow run's input (sleepMs) went with its checkpoints.
    expect(((await t.client.threads.getState(t.thread.thread_id)).values as { sleepMs?: number }).sleepMs).toBeUndefined();
  });
});

describe.each(SDKS)('LangGraph API through the SDK: thread-less join, schemas (SDK %s)', (sdk) => {
  const sdkClient = (key?: string) => s.client(key, sdk);

  it('a thread-less run joined by its id alone: joinStream replays it, join answers its values', async () => {
    const client = sdkClient();
    const run = await client.runs.create(null, 'echo', { input: { steps: 2 }, streamMode: 'updates' });
    const parts = [];
    for await (const part of client.runs.joinStream(null, run.run_id, { lastEventId: '-1' })) parts.push(part);
    expect(parts.filter((p) => p.event === 'updates')).toHaveLength(2);
    const values = await (await fetch(`${s.url}/runs/${run.run_id}/join`, { headers: { 'x-api-key': KEYS.acme } })).json();
    expect(values).toMatchObject({ done: 2 });
    expect((await fetch(`${s.url}/runs/${run.run_id}/join`, { headers: { 'x-api-key': KEYS.globex } })).status).toBe(404);
  });

  it("getSchemas: objects of the graph's channels", async () => {
    const schemas = await sdkClient().assistants.getSchemas('approval');
    expect(Object.keys((schemas.state_schema as { properties: object }).properties).sort()).toEqual(['decision', 'outcome', 'request', 'traceNodes']);
    // A StateGraph's input channel is LangGraph's `__start__`: the schema names the state's channels instead.
    expect(Object.keys((schemas.input_schema as { properties: object }).properties).sort()).toEqual(['decision', 'outcome', 'request', 'traceNodes']);
  });
});

describe('LangGraph API: CORS for a browser app (RUNLEDGER_CORS_ORIGINS)', () => {
  it('a preflight from an allowed origin is answered without a key; responses expose the headers the SDK reads', async () => {
    const preflight = await fetch(`${s.url}/threads/${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}/runs/stream`, {
      method: 'OPTIONS',
      headers: { origin: APP_ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-api-key,last-event-id' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('x-api-key');
    expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('last-event-id');
    const created = await fetch(`${s.url}/runs`, {
      method: 'POST',
      headers: { origin: APP_ORIGIN, 'x-api-key': KEYS.acme, 'content-type': 'application/json' },
      body: JSON.stringify({ assistant_id: 'echo', input: {} }),
    });
    expect(created.status).toBe(200);
    expect(created.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    expect(created.headers.get('access-control-expose-headers')).toContain('Content-Location');
    const other = await fetch(`${s.url}/assistants/search`, {
      method: 'OPTIONS',
      headers: { origin: 'http://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });
});
