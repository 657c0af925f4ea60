// Row binding of sealed values (ARCHITECTURE.md, Encryption at rest): a sealed value opens only
// in the row and column it was sealed for. Values are moved with plain SQL, as someone with
// write access to the database would, and every read of the moved value fails with a clear error.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDb, testDb } from '../../../test/support/db';
import { AesGcmPayloadCodec, FencedPostgresSaver, type Job, Ledger, SealingSerializer } from '../src/index';
import { cfg, checkpoint, META } from './support/checkpoints';

let db: TestDb;
let ledger: Ledger;
const codec = AesGcmPayloadCodec.fromSpec(`k1:${randomBytes(32).toString('base64')}`);
const MOVED = /altered or moved from another row/;

beforeAll(async () => {
  db = await testDb('row_binding');
  ledger = new Ledger(db.ledger.pool, { crypto: codec });
});
afterAll(() => db.close());

async function claimed(input: unknown = {}): Promise<Job> {
  const { job } = await ledger.admit({ graph: 'echo', input });
  const c = await ledger.claim(job.jobId, 'w1', 60_000);
  if (!c.ok) throw new Error(`claim refused: ${c.reason}`);
  return c.job;
}

/** A job's thread with one checkpoint (channel `messages` = `value`) and one pending write on it. */
async function threadWith(value: string) {
  const job = await claimed();
  const saver = new FencedPostgresSaver(ledger, { jobId: job.jobId, fencingToken: job.fencingToken }, { schema: db.schema });
  const cp = checkpoint([value]);
  const config = await saver.put(cfg(job.threadId), cp, META, { messages: 1 });
  await saver.putWrites(config, [['messages', `${value}-write`]], 'task-1');
  const { rows } = await db.ledger.pool.query('SELECT DISTINCT thread_id FROM checkpoints WHERE checkpoint_id = $1', [cp.id]);
  return { saver, thread: rows[0].thread_id as string, checkpointId: cp.id, threadId: job.threadId };
}

describe('sealed values are bound to their rows', () => {
  it('refuses a job column copied to another job or another column', async () => {
    const a = await claimed({ secret: 'a' });
    const { job: b } = await ledger.admit({ graph: 'echo', input: { secret: 'b' } });
    await ledger.complete(a.jobId, a.fencingToken, { answer: 42 });
    expect((await ledger.get(a.jobId))?.result).toEqual({ answer: 42 });
    const pool = db.ledger.pool;
    await pool.query('UPDATE jobs SET input = (SELECT input FROM jobs WHERE job_id = $1) WHERE job_id = $2', [a.jobId, b.jobId]);
    await expect(ledger.get(b.jobId)).rejects.toThrow(/jobs\.input:.* failed authentication .* moved from another row/);
    await pool.query('UPDATE jobs SET input = result WHERE job_id = $1', [a.jobId]);
    await expect(ledger.get(a.jobId)).rejects.toThrow(MOVED);
  });

  it('refuses a checkpoint blob or pending write copied to another thread, and reads them in place', async () => {
    const a = await threadWith('secret-a');
    const b = await threadWith('secret-b');
    const tuple = await b.saver.getTuple(cfg(b.threadId));
    expect(tuple?.checkpoint.channel_values).toEqual({ messages: ['secret-b'] });
    expect(tuple?.pendingWrites).toEqual([['task-1', 'messages', 'secret-b-write']]);
    const pool = db.ledger.pool;
    await pool.query(`UPDATE checkpoint_writes w SET blob = (SELECT blob FROM checkpoint_writes WHERE thread_id = $1) WHERE w.thread_id = $2`, [
      a.thread,
      b.thread,
    ]);
    await expect(b.saver.getTuple(cfg(b.threadId))).rejects.toThrow(/checkpoint_writes\.blob:.* moved from another row/);
    await pool.query(`UPDATE checkpoint_blobs SET blob = (SELECT blob FROM checkpoint_blobs WHERE thread_id = $1) WHERE thread_id = $2`, [a.thread, b.thread]);
    await pool.query('DELETE FROM checkpoint_writes WHERE thread_id = $1', [b.thread]);
    await expect(b.saver.getTuple(cfg(b.threadId))).rejects.toThrow(/checkpoint_blobs\.blob:.* moved from another row/);
    expect((await a.saver.getTuple(cfg(a.threadId)))?.checkpoint.channel_values).toEqual({ messages: ['secret-a'] });
  });

  it('still opens values of the older unbound format (type sealed:<type>)', async () => {
    const a = await threadWith('fresh');
    // The format written before row binding: the serializer's row-less dumpsTyped still makes it.
    const [type, blob] = await new SealingSerializer(codec).dumpsTyped(['from-before']);
    expect(type).toBe('sealed:json');
    await db.ledger.pool.query('UPDATE checkpoint_blobs SET type = $2, blob = $3 WHERE thread_id = $1', [a.thread, type, Buffer.from(blob)]);
    expect((await a.saver.getTuple(cfg(a.threadId)))?.checkpoint.channel_values).toEqual({ messages: ['from-before'] });
  });
});
