// Streams and joins at scale, through the official SDK against a real producer, PostgreSQL, queue
// and worker: one shared tail per run (PostgreSQL load follows runs, not subscribers), and a cap
// on open streams and joins per tenant and per process.

import { Client } from '@langchain/langgraph-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sleep, waitFor } from '../../../test/support/db';
import { KEYS, type LangGraphStack, startLangGraphStack } from './langgraph-stack';

const polls = new Map<string, number>();
let s: LangGraphStack;
beforeAll(async () => {
  s = await startLangGraphStack('lg_streams', { streams: { onTailPoll: (runId) => polls.set(runId, (polls.get(runId) ?? 0) + 1) } });
  s.worker('lg-streams-w1');
  // The worker is up before the timed tests start.
  await s.client().runs.wait(null, 'echo', { input: { steps: 1 } });
});
afterAll(() => s?.close());

type Part = { id?: string; event: string; data: unknown };

async function collect(parts: AsyncIterable<Part>): Promise<Part[]> {
  const out: Part[] = [];
  for await (const p of parts) out.push(p);
  return out;
}

describe('shared run tails', () => {
  it('50 subscribers of one delayed run: every one gets every chunk in order; the ledger is polled per run, not per subscriber', async () => {
    const client = s.client();
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'chat', {
      input: { messages: 'one tail for everyone', tokenDelayMs: 15 },
      streamMode: ['values', 'messages-tuple'],
      afterSeconds: 1,
    });
    let acquired = 0;
    const count = () => {
      acquired += 1;
    };
    s.db.ledger.pool.on('acquire', count);
    const started = Date.now();
    // 40 from the start while the run waits for its due time, 10 more from the start once it runs.
    const early = Array.from({ length: 40 }, () => collect(client.runs.joinStream(thread.thread_id, run.run_id)));
    let mine = 0;
    await waitFor(
      'the run to start',
      async () => {
        mine += 1;
        return ['running', 'completed'].includes((await s.db.ledger.get(run.run_id)).status);
      },
      30_000,
      20,
    );
    await sleep(100);
    const late = Array.from({ length: 10 }, () => collect(client.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: '-1' })));
    const all = await Promise.all([...early, ...late]);
    s.db.ledger.pool.off('acquire', count);
    const elapsedMs = Date.now() - started;

    const logged = await s.db.ledger.pool.query('SELECT seq FROM run_stream_events WHERE job_id = $1 ORDER BY seq', [run.run_id]);
    const ids = logged.rows.map((r) => String(r.seq));
    // Numbered from 0 within the run, as LangGraph's server numbers a run's events.
    expect(ids.slice(0, 3)).toEqual(['0', '1', '2']);
    expect(ids.length).toBeGreaterThan(20);
    for (const parts of all) {
      expect(parts.map((p) => p.id)).toEqual(ids);
      const text = parts.filter((p) => p.event === 'messages').map((p) => (p.data as [{ content: string }])[0].content);
      expect(text.join('')).toBe('You said: one tail for everyone');
    }
    // One tail: 4 polls a second while the run waits, 20 while it runs (twice that allowed for a loaded machine), whatever the number of subscribers.
    const tailPolls = polls.get(run.run_id) ?? 0;
    expect(tailPolls).toBeLessThanOrEqual(elapsedMs / 25 + 10);
    // Besides those, each subscriber costs a few statements (its run when it arrives, its backlog,
    // the SDK's run read at the end), none while it waits: a poll per subscriber every 50 ms would
    // be thousands here.
    expect(acquired - mine).toBeLessThan(tailPolls + 50 * 5 + 50);
  });

  it('50 joins of one run share its tail too, and all get its final values', async () => {
    const client = s.client();
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'echo', { input: { steps: 2, sleepMs: 600 } });
    const started = Date.now();
    const answers = await Promise.all(Array.from({ length: 50 }, () => client.runs.join(thread.thread_id, run.run_id)));
    for (const a of answers) expect(a).toMatchObject({ done: 2 });
    // One tail polls every 50 ms; twice that allows for a loaded machine's timers. A poll per
    // join would be fifty times it.
    expect(polls.get(run.run_id)).toBeLessThanOrEqual((Date.now() - started) / 25 + 10);
  });
});

describe('open stream limits', () => {
  let url: string;
  beforeAll(async () => {
    ({ url } = await s.producer({ streams: { limits: { max: 3, perTenant: 2 } } }));
  });

  const clientOf = (key: string) => new Client({ apiUrl: url, apiKey: key, callerOptions: { maxRetries: 0 } });

  it('beyond the per-tenant and the per-process limit a stream, join or wait answers 429 and starts nothing', async () => {
    const acme = clientOf(KEYS.acme);
    const thread = await acme.threads.create();
    const slow = await acme.runs.create(thread.thread_id, 'echo', { input: { steps: 1, sleepMs: 30_000 } });
    const stop = new AbortController();
    // The SDK throws an AbortError once the signal aborts.
    const hold = (client: Client) => collect(client.runs.joinStream(thread.thread_id, slow.run_id, { signal: stop.signal })).catch(() => []);
    const held = [hold(acme), hold(acme)];
    const open = () => fetch(`${url}/threads/${thread.thread_id}/runs/${slow.run_id}/stream`, { headers: { 'x-api-key': KEYS.acme } });
    await sleep(500);
    const refused = await open();
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(((await refused.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'rate_limited',
      message: expect.stringContaining('MAX_OPEN_STREAMS_PER_TENANT'),
    });
    await expect(acme.runs.join(thread.thread_id, slow.run_id)).rejects.toThrow(/429/);
    // A wait over the limit admits no run.
    const other = await acme.threads.create();
    await expect(acme.runs.wait(other.thread_id, 'echo', { input: {} })).rejects.toThrow(/429/);
    expect(await acme.runs.list(other.thread_id)).toEqual([]);

    // The other tenant gets the process's third slot, then the process is full.
    const globex = clientOf(KEYS.globex);
    const gThread = await globex.threads.create();
    const gRun = await globex.runs.create(gThread.thread_id, 'echo', { input: { steps: 1, sleepMs: 30_000 } });
    const gStop = new AbortController();
    const gHeld = collect(globex.runs.joinStream(gThread.thread_id, gRun.run_id, { signal: gStop.signal })).catch(() => []);
    await sleep(300);
    const full = await fetch(`${url}/threads/${gThread.thread_id}/runs/${gRun.run_id}/stream`, { headers: { 'x-api-key': KEYS.globex } });
    expect(full.status).toBe(429);
    expect(((await full.json()) as { error: { message: string } }).error.message).toContain('MAX_OPEN_STREAMS');

    // Closed streams give their slots back.
    stop.abort();
    gStop.abort();
    await Promise.all([...held, gHeld]);
    const again = await waitFor('a slot to free', async () => {
      const r = await open();
      if (r.status === 200) return r;
      await r.body?.cancel();
      return undefined;
    });
    await again.body?.cancel();
    await acme.runs.cancel(thread.thread_id, slow.run_id);
    await globex.runs.cancel(gThread.thread_id, gRun.run_id);
  });
});
