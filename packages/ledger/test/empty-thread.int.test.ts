// A claim tells whether the job's LangGraph thread has any checkpoint yet (`threadEmpty`), and
// FencedPostgresSaver skips its first read of a thread it was told is empty, until its own first write.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDb, testDb } from '../../../test/support/db';
import { FencedPostgresSaver, type Job, langGraphThreadId } from '../src/index';
import { cfg, checkpoint, META } from './support/checkpoints';
import { queriesDuring } from './support/observe';

let db: TestDb;
beforeAll(async () => {
  db = await testDb('empty_thread');
});
afterAll(() => db.close());

async function claim(req: { threadId?: string; tenant?: string } = {}) {
  const { job } = await db.ledger.admit({ graph: 'echo', input: {}, ...req });
  const c = await db.ledger.claim(job.jobId, 'w1', 60_000);
  if (!c.ok) throw new Error(`claim refused: ${c.reason}`);
  return c;
}

const saverFor = (job: Job, emptyThread?: string) =>
  new FencedPostgresSaver(db.ledger, { jobId: job.jobId, fencingToken: job.fencingToken }, { schema: db.schema, emptyThread });

/** How many queries the pool runs while `work` runs. */
const queryCount = async (work: () => Promise<unknown>) => (await queriesDuring(db.ledger.pool, work)).length;

describe('claim: threadEmpty', () => {
  it('is true for a job on a new thread and false once the thread has a checkpoint, per tenant', async () => {
    const first = await claim({ threadId: 'conversation-1', tenant: 'acme' });
    expect(first.threadEmpty).toBe(true);
    await saverFor(first.job).put(cfg(langGraphThreadId('acme', 'conversation-1')), checkpoint(), META, { messages: 1 });
    await db.ledger.complete(first.job.jobId, first.job.fencingToken, {});
    // The next job of the thread continues it; another tenant's thread of the same id is new.
    expect((await claim({ threadId: 'conversation-1', tenant: 'acme' })).threadEmpty).toBe(false);
    expect((await claim({ threadId: 'conversation-1', tenant: 'other' })).threadEmpty).toBe(true);
  });

  it('is false for a later attempt of a job that saved a checkpoint', async () => {
    const c = await claim();
    await saverFor(c.job).put(cfg(c.job.threadId), checkpoint(), META, { messages: 1 });
    await db.ledger.release(c.job.jobId, c.job.fencingToken, 'drained');
    const again = await db.ledger.claim(c.job.jobId, 'w2', 60_000);
    expect(again).toMatchObject({ ok: true, threadEmpty: false });
  });
});

describe('FencedPostgresSaver emptyThread', () => {
  it('answers the first read of the empty thread without a query, and reads after its own first write', async () => {
    const c = await claim();
    const saver = saverFor(c.job, c.job.threadId);
    expect(await queryCount(async () => expect(await saver.getTuple(cfg(c.job.threadId))).toBeUndefined())).toBe(0);
    // Another thread is read as usual.
    expect(await queryCount(() => saver.getTuple(cfg(`${c.job.threadId}-other`)))).toBe(1);
    const cp = checkpoint(['saved']);
    await saver.put(cfg(c.job.threadId), cp, META, { messages: 1 });
    expect((await saver.getTuple(cfg(c.job.threadId)))?.checkpoint.id).toBe(cp.id);
  });
});
