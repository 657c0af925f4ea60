// A worker SIGKILLed in the middle of a streamed run: the SDK's one `for await` loop pauses, then
// goes on with the next attempt's events and ends with the run's final values.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type LangGraphStack, SDKS, startLangGraphStack } from './langgraph-stack';

describe('LangGraph API through the SDK: a worker killed mid-stream', () => {
  let s: LangGraphStack;
  let failed = false;
  beforeAll(async () => {
    s = await startLangGraphStack('lg_kill');
  });
  // Each test starts its own workers: none of one test may run the next test's job.
  afterEach((ctx) => s.procs.cleanup(ctx));
  afterAll(() => s?.close(failed));

  it.each(SDKS)('SDK %s: the stream goes on with attempt 2 after a new metadata event; ids rise; no chunk of attempt 1 after it', async (sdk) => {
    const first = s.worker(`lg-kill-a-${sdk}`);
    const client = s.client(undefined, sdk);
    const thread = await client.threads.create();
    const message = 'a message long enough to be killed in the middle of';
    const parts: Array<{ event: string; id?: string; data: unknown }> = [];
    let killedAfter = -1;
    try {
      for await (const part of client.runs.stream(thread.thread_id, 'chat', {
        input: { messages: message, tokenDelayMs: 60 },
        streamMode: ['values', 'messages-tuple'],
      })) {
        parts.push(part);
        if (killedAfter < 0 && parts.filter((p) => p.event === 'messages').length === 5) {
          killedAfter = parts.length;
          first.kill('SIGKILL');
          await first.exited;
          s.worker(`lg-kill-b-${sdk}`);
        }
      }
    } catch (err) {
      failed = true;
      throw err;
    }
    expect(killedAfter).toBeGreaterThan(0);
    const metadata = parts.flatMap((p, i) => (p.event === 'metadata' ? [{ i, attempt: (p.data as { attempt: number }).attempt }] : []));
    expect(metadata.map((m) => m.attempt)).toEqual([1, 2]);
    const restart = metadata[1]?.i as number;
    expect(restart).toBeGreaterThanOrEqual(killedAfter);

    // Ids counted from 0, rising strictly over both attempts (attempt 2 skips one number), up to the last chunk (no trailing event).
    expect(parts.at(-1)?.event).toBe('values');
    const ids = parts.map((p) => Number(p.id));
    expect(ids.every((id, i) => id === (i === 0 ? 0 : (ids[i - 1] as number) + (i === restart ? 2 : 1)))).toBe(true);
    // Every event after the second metadata was written by attempt 2 (the log records each chunk's attempt).
    const after = ids.slice(restart);
    const runId = (parts[0]?.data as { run_id?: string } | undefined)?.run_id;
    const rows = await s.db.ledger.pool.query('SELECT attempt FROM run_stream_events WHERE job_id = $1 AND seq = ANY ($2::int[]) ORDER BY seq', [runId, after]);
    expect(rows.rows.map((r) => r.attempt)).toEqual(after.map(() => 2));

    // Attempt 2 streamed the whole reply again; the run ends with its final values.
    const tokens = parts.slice(restart).filter((p) => p.event === 'messages');
    expect(tokens.map((p) => (p.data as [{ content: string }])[0].content).join('')).toBe(`You said: ${message}`);
    const last = parts.filter((p) => p.event === 'values').at(-1)?.data as { messages: Array<{ content: string }> };
    expect(last.messages.map((m) => m.content)).toEqual([message, `You said: ${message}`]);
    const [run] = await client.runs.list(thread.thread_id);
    expect(run).toMatchObject({ status: 'success', attempt: 2 });
  });
});
