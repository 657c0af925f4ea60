// FencedPostgresSaver's held writes (docs/decisions/0001-fencing.md, "Checkpoint writes"): once running, a
// task's plain writes ride with the next put in one statement, or go on their own in the next
// turn of the event loop; a stale attempt's held writes are refused with its put; reads see them.
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDb, testDb } from '../../../test/support/db';
import { FencedPostgresSaver, LeaseLostError } from '../src/index';
import { cfg, checkpoint, META } from './support/checkpoints';
import { backdateLease, jobIn } from './support/jobs';
import { queriesDuring } from './support/observe';

let db: TestDb;
beforeAll(async () => {
  db = await testDb('held_writes');
});
afterAll(() => db.close());

/** A claimed job (starting) and its attempt's saver. */
async function claimed() {
  const { job, token } = await jobIn(db.ledger, 'starting');
  return { job, saver: new FencedPostgresSaver(db.ledger, { jobId: job.jobId, fencingToken: token }, { schema: db.schema }) };
}

/** A claimed job and its saver, already running (its first checkpoint saved). */
async function running() {
  const { job, saver } = await claimed();
  const first = checkpoint();
  await saver.put(cfg(job.threadId), first, META, { messages: 1 });
  return { job, saver, first: first.id };
}

/** The saver's checkpoint statements sent while `work` runs, by name. */
const statementsDuring = async (work: () => Promise<unknown>) =>
  (await queriesDuring(db.ledger.pool, work)).filter((n) => n.startsWith('runledger_put')).map((n) => n.slice('runledger_'.length));

const writeRows = async (threadId: string) =>
  (
    await db.ledger.pool.query(
      'SELECT checkpoint_id, task_id, idx, channel, type, blob, xmin::text FROM checkpoint_writes WHERE thread_id = $1 ORDER BY task_id, idx',
      [threadId],
    )
  ).rows;

const WRITES: [string, unknown][] = [
  ['messages', 'a'],
  ['other', { x: 2 }],
  ['messages', 'b'],
];

describe('FencedPostgresSaver held writes', () => {
  it('a put right after task writes carries them: one statement, one transaction, the same rows as PostgresSaver', async () => {
    const { job, saver, first } = await running();
    const next = checkpoint(['next']);
    const sent = await statementsDuring(() =>
      Promise.all([
        saver.putWrites(cfg(job.threadId, first), WRITES, 'task-1'),
        saver.putWrites(cfg(job.threadId, first), [['other', 3]], 'task-2'),
        saver.put(cfg(job.threadId, first), next, META, { messages: 2 }),
      ]),
    );
    expect(sent).toEqual(['put_checkpoint_running']);
    const rows = await writeRows(job.threadId);
    expect(rows.map((r) => [r.task_id, r.idx, r.channel])).toEqual([
      ['task-1', 0, 'messages'],
      ['task-1', 1, 'other'],
      ['task-1', 2, 'messages'],
      ['task-2', 0, 'other'],
    ]);
    const cpXmin = (await db.ledger.pool.query('SELECT xmin::text FROM checkpoints WHERE checkpoint_id = $1', [next.id])).rows[0]?.xmin;
    expect(new Set(rows.map((r) => r.xmin))).toEqual(new Set([cpXmin]));
    // Serialised and keyed as LangGraph's own saver stores the same calls.
    const stock = new PostgresSaver(db.ledger.pool, undefined, { schema: db.schema });
    await stock.putWrites(cfg(`${job.threadId}-stock`, first), WRITES, 'task-1');
    await stock.putWrites(cfg(`${job.threadId}-stock`, first), [['other', 3]], 'task-2');
    const strip = (rs: Record<string, unknown>[]) => rs.map(({ xmin: _x, ...r }) => r);
    expect(strip(rows)).toEqual(strip(await writeRows(`${job.threadId}-stock`)));
    expect((await saver.getTuple(cfg(job.threadId, first)))?.pendingWrites).toHaveLength(4);
  });

  it("writes made while the attempt's first put is in flight ride with the put after it", async () => {
    const { job, saver } = await claimed();
    const first = checkpoint();
    const sent = await statementsDuring(async () => {
      const put = saver.put(cfg(job.threadId), first, META, { messages: 1 });
      const inFlight = () => (saver as unknown as { firstPuts: number }).firstPuts;
      for (let i = 0; i < 1_000 && inFlight() === 0; i++) await Promise.resolve();
      expect(inFlight()).toBe(1);
      const write = saver.putWrites(cfg(job.threadId, first.id), WRITES, 'task-1');
      await put;
      await Promise.all([write, saver.put(cfg(job.threadId, first.id), checkpoint(['next']), META, { messages: 2 })]);
    });
    expect(sent).toEqual(['put_checkpoint', 'put_checkpoint_running']);
    expect(await writeRows(job.threadId)).toHaveLength(3);
  });

  it('writes no put follows are written on their own in the next turn, before their promise settles', async () => {
    const { job, saver, first } = await running();
    const sent = await statementsDuring(() => saver.putWrites(cfg(job.threadId, first), WRITES, 'task-1'));
    expect(sent).toEqual(['put_writes']);
    expect(await writeRows(job.threadId)).toHaveLength(3);
  });

  it('special writes (errors, interrupts) are never held', async () => {
    const { job, saver, first } = await running();
    const sent = await statementsDuring(() =>
      Promise.all([
        saver.putWrites(cfg(job.threadId, first), [['__error__', 'boom']], 'task-1'),
        saver.put(cfg(job.threadId, first), checkpoint(), META, { messages: 2 }),
      ]),
    );
    expect(sent.sort()).toEqual(['put_checkpoint_running', 'put_writes']);
  });

  it('a read writes the held writes first', async () => {
    const { job, saver, first } = await running();
    const write = saver.putWrites(cfg(job.threadId, first), WRITES, 'task-1');
    // Microtasks only (the serializer's), so the next turn's flush has not run: the write is held.
    const held = () => (saver as unknown as { held: unknown[] }).held.length;
    for (let i = 0; i < 1_000 && held() === 0; i++) await Promise.resolve();
    expect(held()).toBe(1);
    const tuple = await saver.getTuple(cfg(job.threadId, first));
    expect(tuple?.pendingWrites?.map((w) => w[1])).toEqual(['messages', 'other', 'messages']);
    await write;
  });

  it("a stale attempt's held writes are refused with its put: nothing written, both throw LeaseLostError, both counted", async () => {
    const { job, saver, first } = await running();
    await backdateLease(db.ledger.pool, job.jobId);
    const c = await db.ledger.claim(job.jobId, 'w2');
    if (!c.ok) throw new Error('takeover refused');
    const write = saver.putWrites(cfg(job.threadId, first), WRITES, 'task-1').catch((e: unknown) => e);
    const put = saver.put(cfg(job.threadId, first), checkpoint(), META, { messages: 2 }).catch((e: unknown) => e);
    expect(await write).toBeInstanceOf(LeaseLostError);
    expect(await put).toBeInstanceOf(LeaseLostError);
    expect(saver.rejectedWrites).toBe(2);
    expect(await writeRows(job.threadId)).toEqual([]);
    expect((await db.ledger.pool.query('SELECT count(*)::int AS n FROM checkpoints WHERE thread_id = $1', [job.threadId])).rows[0].n).toBe(1);
  });
});
