// toolEffect: a user's LangChain tool whose body books through the effects ledger, keyed on the
// model's tool call, exactly as the built-in vacation agent's tools are.
import { tool } from '@langchain/core/tools';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { type TestDb, testDb } from '../../../test/support/db';
import { toolEffect, toolEffectKey } from '../src/index';
import { claimAttempt } from './support/attempt';

let db: TestDb;
beforeAll(async () => {
  db = await testDb('effect_tool');
});
afterAll(() => db.close());

function bookTable(calls: string[]) {
  return tool(
    toolEffect({ name: 'book_table', idempotent: true }, async ({ table }: { table: number }, idempotencyKey) => {
      calls.push(idempotencyKey);
      return `TABLE-${table}`;
    }),
    { name: 'book_table', description: 'Books a table.', schema: z.object({ table: z.number() }) },
  );
}

it('calls the provider once per tool call and answers a repeat from the ledger', async () => {
  const { job } = await db.ledger.admit({ graph: 'tools', input: {} });
  const attempt = await claimAttempt(db, job);
  const calls: string[] = [];
  const call = { id: 'call_7', name: 'book_table', args: { table: 4 }, type: 'tool_call' as const };
  const first = await bookTable(calls).invoke(call, attempt.config);
  const again = await bookTable(calls).invoke(call, attempt.config);
  expect([first.content, again.content]).toEqual(['TABLE-4', 'TABLE-4']);
  expect(calls).toHaveLength(1);
  const row = await db.ledger.findEffect(job.jobId, toolEffectKey(attempt.ctx, 'call_7'));
  expect(row).toMatchObject({ status: 'committed', name: 'book_table', idempotencyKey: calls[0], result: 'TABLE-4' });
});

it('refuses a call without a tool call id, or outside a Runledger worker', async () => {
  const { job } = await db.ledger.admit({ graph: 'tools', input: {} });
  const attempt = await claimAttempt(db, job);
  const calls: string[] = [];
  await expect(bookTable(calls).invoke({ table: 1 }, attempt.config)).rejects.toThrow("book_table must be invoked with the model's tool call");
  const call = { id: 'call_8', name: 'book_table', args: { table: 1 }, type: 'tool_call' as const };
  await expect(bookTable(calls).invoke(call, { configurable: { thread_id: 't' } })).rejects.toThrow('No Runledger run context');
  expect(calls).toEqual([]);
});
