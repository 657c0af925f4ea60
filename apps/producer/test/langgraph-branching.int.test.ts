// Branching and human in the loop as LangGraph's server does them: a run from an earlier
// checkpoint forks the thread (agent-chat-ui's Edit and Regenerate), `input: null` continues after
// a static breakpoint, and a new input on an interrupted thread runs instead of answering 409.
import type { Client } from '@langchain/langgraph-sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type LangGraphStack, SDKS, startLangGraphStack } from './langgraph-stack';

type Chat = { messages: Array<{ content: string }> };
const contents = (v: unknown) => (v as Chat).messages.map((m) => m.content);

let s: LangGraphStack;
beforeAll(async () => {
  s = await startLangGraphStack('lg_branching');
});
afterAll(() => s?.close());

/** A chat thread with two turns; answers the checkpoint the second turn started from (its parent of the "two" input). */
async function twoTurns(client: Client) {
  const thread = await client.threads.create();
  await client.runs.wait(thread.thread_id, 'chat', { input: { messages: 'one' } });
  await client.runs.wait(thread.thread_id, 'chat', { input: { messages: 'two' } });
  const history = await client.threads.getHistory(thread.thread_id, { limit: 100 });
  // The first turn's final checkpoint: two messages, nothing next.
  const endOfOne = history.find((h) => contents(h.values).length === 2 && h.next.length === 0);
  // The second turn's input checkpoint: its reply is next.
  const beforeReply = history.find((h) => contents(h.values).length === 3 && h.next[0] === 'reply');
  if (!endOfOne?.checkpoint?.checkpoint_id || !beforeReply?.checkpoint?.checkpoint_id) throw new Error('history lacks the expected checkpoints');
  return { thread, endOfOne, beforeReply, historyLength: history.length };
}

describe.each(SDKS)('LangGraph API through the SDK: runs from a checkpoint (SDK %s)', (sdk) => {
  const client = () => s.client(undefined, sdk);
  beforeAll(() => {
    s.worker(`lg-branch-${sdk}`);
  });
  afterAll(() => s.procs.cleanup({ task: { result: { state: 'pass' } } }));

  it('Edit: a new input from an earlier checkpoint makes a new branch; history keeps the old one', async () => {
    const c = client();
    const { thread, endOfOne, historyLength } = await twoTurns(c);
    const edited = await c.runs.wait(thread.thread_id, 'chat', { input: { messages: 'deux' }, checkpointId: endOfOne.checkpoint.checkpoint_id ?? undefined });

    expect(contents(edited)).toEqual(['one', 'You said: one', 'deux', 'You said: deux']);
    expect(contents((await c.threads.getState(thread.thread_id)).values)).toEqual(['one', 'You said: one', 'deux', 'You said: deux']);
    const history = await c.threads.getHistory(thread.thread_id, { limit: 100 });
    expect(history.length).toBeGreaterThan(historyLength);
    // Two branches grow from the first turn's end, each with its own second turn: "two" and "deux".
    expect(history.filter((h) => h.parent_checkpoint?.checkpoint_id === endOfOne.checkpoint.checkpoint_id)).toHaveLength(2);
    const ends = history.filter((h) => contents(h.values).length === 4).map((h) => contents(h.values).slice(2));
    expect(ends.sort()).toEqual([
      ['deux', 'You said: deux'],
      ['two', 'You said: two'],
    ]);
  });

  it('Regenerate: no input and `checkpoint` (as useStream sends it) reruns the reply on a new branch', async () => {
    const c = client();
    const { thread, beforeReply } = await twoTurns(c);
    const runs = [];
    for await (const part of c.runs.stream(thread.thread_id, 'chat', { input: null, checkpoint: beforeReply.checkpoint, streamMode: 'values' }))
      runs.push(part);
    expect(contents(runs.filter((p) => p.event === 'values').at(-1)?.data)).toEqual(['one', 'You said: one', 'two', 'You said: two']);
    const history = await c.threads.getHistory(thread.thread_id, { limit: 100 });
    // Two final states of the second turn now: the first reply and the regenerated one, on two branches.
    const finals = history.filter((h) => contents(h.values).length === 4);
    expect(finals).toHaveLength(2);
    expect(new Set(finals.map((h) => h.parent_checkpoint?.checkpoint_id)).size).toBe(2);
    expect((await c.runs.list(thread.thread_id)).map((r) => r.status)).toEqual(['success', 'success', 'success']);
  });

  it('bad checkpoints answer 4xx and admit nothing; a resume naming the thread head resumes', async () => {
    const c = client();
    const { thread, endOfOne } = await twoTurns(c);
    const other = await c.threads.create();
    const before = (await s.db.ledger.list({ limit: 500 })).jobs.length;
    const id = endOfOne.checkpoint.checkpoint_id as string;
    await expect(c.runs.create(other.thread_id, 'chat', { input: { messages: 'x' }, checkpointId: id })).rejects.toThrow(/404/);
    await expect(
      c.runs.create(thread.thread_id, 'chat', { input: { messages: 'x' }, checkpoint: { checkpoint_id: id, checkpoint_ns: 'sub:1', checkpoint_map: null } }),
    ).rejects.toThrow(/422/);
    await expect(c.runs.create(thread.thread_id, 'chat', { command: { resume: 1 }, checkpointId: id })).rejects.toThrow(/422/);
    expect((await s.db.ledger.list({ limit: 500 })).jobs.length).toBe(before);
    // A resume naming the thread's head (useStream sends the head of the branch shown) resumes as usual.
    const hitl = await c.threads.create();
    await c.runs.wait(hitl.thread_id, 'approval', { input: { request: 'x' } });
    const head = (await c.threads.getState(hitl.thread_id)).checkpoint;
    expect(await c.runs.wait(hitl.thread_id, 'approval', { command: { resume: true }, checkpoint: head })).toMatchObject({ outcome: 'x: approved' });
  });
});

describe.each(SDKS)('LangGraph API through the SDK: continuing interrupted threads (SDK %s)', (sdk) => {
  const client = () => s.client(undefined, sdk);
  beforeAll(() => {
    s.worker(`lg-continue-${sdk}`);
  });
  afterAll(() => s.procs.cleanup({ task: { result: { state: 'pass' } } }));

  it('input null after a static breakpoint continues the thread in a new run', async () => {
    const c = client();
    const thread = await c.threads.create();
    await c.runs.wait(thread.thread_id, 'chat', { input: { messages: 'hi' }, interruptBefore: ['reply'] });
    expect((await c.threads.getState(thread.thread_id)).next).toEqual(['reply']);
    expect(contents(await c.runs.wait(thread.thread_id, 'chat', { input: null }))).toEqual(['hi', 'You said: hi']);
    expect((await c.runs.list(thread.thread_id)).map((r) => r.status)).toEqual(['success', 'interrupted']);
    expect((await c.threads.get(thread.thread_id)).status).toBe('idle');
  });

  it('a new input on a thread waiting at interrupt() runs that input; the parked run stays interrupted', async () => {
    const c = client();
    const thread = await c.threads.create();
    await c.runs.wait(thread.thread_id, 'approval', { input: { request: 'a boat' } });
    const again = (await c.runs.wait(thread.thread_id, 'approval', { input: { request: 'a bike' } })) as { request: string; __interrupt__: unknown[] };
    expect(again.request).toBe('a bike');
    expect(again.__interrupt__).toHaveLength(1);
    const [newer, older] = await c.runs.list(thread.thread_id);
    expect([newer?.status, older?.status]).toEqual(['interrupted', 'interrupted']);
    const done = await c.runs.wait(thread.thread_id, 'approval', { command: { resume: { approved: true } } });
    expect(done).toMatchObject({ request: 'a bike', outcome: 'a bike: approved' });
    expect((await c.runs.get(thread.thread_id, newer?.run_id as string)).status).toBe('success');
    expect((await c.runs.get(thread.thread_id, older?.run_id as string)).status).toBe('interrupted');
  });
});

describe('LangGraph API: a fork survives a worker SIGKILL', () => {
  afterEach((ctx) => s.procs.cleanup(ctx));

  it('killed before the fork checkpointed: attempt 2 starts from the same checkpoint, not the thread head', async () => {
    const c = s.client();
    s.worker('lg-fork-setup');
    const { thread, endOfOne } = await twoTurns(c);
    await s.procs.cleanup({ task: { result: { state: 'pass' } } });
    const doomed = s.worker('lg-fork-doomed', { RUNLEDGER_TEST_CRASH_AT: 'after_claim' });
    const run = await c.runs.create(thread.thread_id, 'chat', { input: { messages: 'deux' }, checkpointId: endOfOne.checkpoint.checkpoint_id ?? undefined });
    await doomed.exited;
    s.worker('lg-fork-rescuer');
    const values = await c.runs.join(thread.thread_id, run.run_id);
    expect(contents(values)).toEqual(['one', 'You said: one', 'deux', 'You said: deux']);
    expect(await c.runs.get(thread.thread_id, run.run_id)).toMatchObject({ status: 'success', attempt: 2 });
    const events = (await s.db.ledger.events(run.run_id)).map((e) => e.type);
    expect(events).toContain('replayed');
  });

  it('killed mid-reply after the fork checkpointed: attempt 2 resumes on the new branch', async () => {
    const c = s.client();
    s.worker('lg-fork-setup2');
    const { thread, endOfOne } = await twoTurns(c);
    await s.procs.cleanup({ task: { result: { state: 'pass' } } });
    const first = s.worker('lg-fork-a');
    const message = 'a message long enough to be killed in the middle of';
    let killed = false;
    let last: unknown;
    for await (const part of c.runs.stream(thread.thread_id, 'chat', {
      input: { messages: message, tokenDelayMs: 40 },
      checkpointId: endOfOne.checkpoint.checkpoint_id ?? undefined,
      streamMode: ['values', 'messages-tuple'],
    })) {
      if (part.event === 'values') last = part.data;
      if (!killed && part.event === 'messages') {
        killed = true;
        first.kill('SIGKILL');
        await first.exited;
        s.worker('lg-fork-b');
      }
    }
    expect(killed).toBe(true);
    expect(contents(last)).toEqual(['one', 'You said: one', message, `You said: ${message}`]);
    const [run] = await c.runs.list(thread.thread_id);
    expect(run).toMatchObject({ status: 'success', attempt: 2 });
    expect((await s.db.ledger.events(run?.run_id as string)).map((e) => e.type)).toContain('resumed');
  });
});
