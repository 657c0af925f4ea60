import { Command, MemorySaver } from '@langchain/langgraph';
import { conversationOf, interruptQuestions } from '@runledger/ledger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDb, testDb } from '../../../test/support/db';
import { approvalGraph } from '../src/graphs/approval';
import { admitVacation, claimAttempt } from './support/attempt';

// The shared conversation reader on what real runs store: the vacation graph's final state,
// saved by the ledger as the worker does and read back from PostgreSQL, and the checkpointer's
// own copy of the thread; the approval graph's interrupt as parked.
let db: TestDb;
beforeAll(async () => {
  db = await testDb('conversation');
});
afterAll(() => db.close());

describe('conversation of real runs', () => {
  it('shows a vacation run as user → assistant tool calls → tool results → assistant answer', async () => {
    const job = await admitVacation(db, {});
    const a = await claimAttempt(db, job);
    const out = await a.graph.invoke({}, a.config);
    await db.ledger.complete(job.jobId, a.ctx.fencingToken, out);
    const stored = (await db.ledger.get(job.jobId)).result;
    expect(JSON.stringify(stored)).toContain('"lc":1');

    const views = conversationOf(stored) ?? [];
    expect(views.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'tool', 'assistant']);
    const calls = views[1]?.toolCalls ?? [];
    expect(calls.map((c) => c.name)).toEqual(['book_flight', 'book_hotel', 'book_car']);
    for (const c of calls) expect(c.args).toEqual(expect.any(Object));
    const results = views.filter((m) => m.role === 'tool');
    expect(results.map((m) => m.toolCallId)).toEqual(calls.map((c) => c.id));
    expect(results.map((m) => m.text).join(' ')).toMatch(/FLIGHT-\d+.*HOTEL-\d+.*CAR-\d+/);
    expect(views.at(-1)?.text).toMatch(/FLIGHT-\d+/);

    // The checkpointer's copy of the same thread reads the same once through JSON.
    const tuple = await a.saver.getTuple({ configurable: { thread_id: job.threadId } });
    const fromCheckpoint = conversationOf(JSON.parse(JSON.stringify(tuple?.checkpoint.channel_values)));
    expect(fromCheckpoint?.map((m) => m.role)).toEqual(views.map((m) => m.role));
  });

  it("names the approval graph's question as the worker parks it", async () => {
    const graph = approvalGraph.build(new MemorySaver());
    const config = { configurable: { thread_id: 'approval-conversation' } };
    const state = (await graph.invoke({ request: 'buy a boat' }, config)) as { __interrupt__?: unknown };
    const parked = JSON.parse(JSON.stringify(state.__interrupt__));
    expect(interruptQuestions(parked)).toEqual(['Approve "buy a boat"? Resume with { "approved": true|false }.']);
    const done = (await graph.invoke(new Command({ resume: { approved: true } }), config)) as { outcome: string };
    expect(done.outcome).toBe('buy a boat: approved');
  });
});
