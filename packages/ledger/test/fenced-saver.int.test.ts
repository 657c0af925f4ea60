// The fenced checkpointer (DESIGN §5): a stale attempt's checkpoint or pending write is rolled
// back, the first checkpoint moves starting → running in the same transaction, and a claim
// racing a put either sees the checkpoint (committed first) or makes the put roll back.
import { type Checkpoint, type CheckpointMetadata, emptyCheckpoint, uuid6 } from '@langchain/langgraph-checkpoint';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sleep, type TestDb, testDb } from '../../../test/support/db';
import { FencedPostgresSaver, type Job, LeaseLostError, Ledger } from '../src/index';
import { backdateLease, deferred, settledWithin, warmPool } from './support/jobs';

let db: TestDb;
beforeAll(async () => {
  db = await testDb('fenced_saver');
  await warmPool(db.ledger.pool, 10);
});
afterAll(() => db.close());

const META: CheckpointMetadata = { source: 'input', step: -1, parents: {} };

function checkpoint(): Checkpoint {
  return { ...emptyCheckpoint(), id: uuid6(-1), channel_values: { messages: ['hi'] }, channel_versions: { messages: 1 } };
}

const cfg = (threadId: string, checkpointId?: string) => ({ configurable: { thread_id: threadId, checkpoint_ns: '', checkpoint_id: checkpointId } });

/** Every checkpoint-table row of a thread: what a refused write must leave untouched. */
async function checkpointRows(threadId: string) {
  const rows = async (table: string) => (await db.ledger.pool.query(`SELECT * FROM ${table} WHERE thread_id = $1 ORDER BY 2, 3, 4`, [threadId])).rows;
  return { checkpoints: await rows('checkpoints'), blobs: await rows('checkpoint_blobs'), writes: await rows('checkpoint_writes') };
}

async function claimed(ledger: Ledger, worker: string, ttlMs = 60_000): Promise<Job> {
  const { job } = await ledger.admit({ graph: 'echo', input: {} });
  const c = await ledger.claim(job.jobId, worker, ttlMs);
  if (!c.ok) throw new Error(`claim refused: ${c.reason}`);
  return c.job;
}

const saverFor = (job: Job, ledger: Ledger = db.ledger) =>
  new FencedPostgresSaver(ledger, { jobId: job.jobId, fencingToken: job.fencingToken }, { schema: db.schema });

/** A ledger that holds the saver's transaction open right after its fence check passed (share or row lock held). */
class GatedLedger extends Ledger {
  readonly checked = deferred();
  readonly gate = deferred();
  override async recordCheckpoint(jobId: string, token: number, q?: pg.PoolClient): Promise<boolean> {
    const moved = await super.recordCheckpoint(jobId, token, q);
    if (moved) await this.hold();
    return moved;
  }
  override async checkFence(jobId: string, token: number, q: pg.PoolClient): Promise<boolean> {
    const ok = await super.checkFence(jobId, token, q);
    if (ok) await this.hold();
    return ok;
  }
  private async hold() {
    this.checked.resolve();
    await this.gate.promise;
  }
}

describe('FencedPostgresSaver', () => {
  it('refuses a stale checkpoint and pending write: tables unchanged, LeaseLostError, counted', async () => {
    const { ledger } = db;
    const old = await claimed(ledger, 'w1');
    const stale = saverFor(old);
    const first = await stale.put(cfg(old.threadId), checkpoint(), META, { messages: 1 });
    await backdateLease(ledger.pool, old.jobId);
    const c = await ledger.claim(old.jobId, 'w2');
    if (!c.ok) throw new Error('takeover refused');
    const before = await checkpointRows(old.threadId);
    await expect(stale.put(cfg(old.threadId), checkpoint(), META, { messages: 2 })).rejects.toBeInstanceOf(LeaseLostError);
    expect(stale.rejectedWrites).toBe(1);
    const err = await stale.putWrites(cfg(old.threadId, first.configurable?.checkpoint_id), [['messages', 'late']], 'task-1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LeaseLostError);
    expect(err).toMatchObject({ jobId: old.jobId, fencingToken: 1 });
    expect(stale.rejectedWrites).toBe(2);
    expect(await checkpointRows(old.threadId)).toEqual(before);
    // The new holder writes on the same thread as usual.
    const fresh = saverFor(c.job);
    await fresh.putWrites(cfg(old.threadId, first.configurable?.checkpoint_id), [['messages', 'new']], 'task-2');
    await fresh.put(cfg(old.threadId), checkpoint(), META, { messages: 2 });
    expect(fresh.rejectedWrites).toBe(0);
    const after = await checkpointRows(old.threadId);
    expect(after.checkpoints).toHaveLength(2);
    expect(after.writes.map((w) => w.task_id)).toEqual(['task-2']);
  });

  it('moves starting → running with a checkpointed event in the checkpoint’s own transaction', async () => {
    const { ledger } = db;
    const job = await claimed(ledger, 'w1');
    const saver = saverFor(job);
    await saver.putWrites(cfg(job.threadId, 'no-checkpoint-yet'), [['x', 1]], 'task-0');
    expect((await ledger.get(job.jobId)).status).toBe('starting');
    const cp = checkpoint();
    await saver.put(cfg(job.threadId), cp, META, { messages: 1 });
    const after = await ledger.get(job.jobId);
    expect(after.status).toBe('running');
    expect(after.firstCheckpointAt).not.toBeNull();
    expect((await ledger.events(job.jobId)).map((e) => [e.type, e.fencingToken, e.workerId])).toEqual([
      ['accepted', 0, null],
      ['claimed', 1, 'w1'],
      ['checkpointed', 1, 'w1'],
    ]);
    // Same transaction: the job row and the checkpoint row were written by one transaction id.
    const xmin = async (q: string, id: string) => (await ledger.pool.query(q, [id])).rows[0]?.xmin as string | undefined;
    const cpXmin = await xmin('SELECT xmin::text FROM checkpoints WHERE checkpoint_id = $1', cp.id);
    expect(cpXmin).toBeDefined();
    expect(await xmin('SELECT xmin::text FROM jobs WHERE job_id = $1', job.jobId)).toBe(cpXmin);
    // Later checkpoints add no second event; reads through the fenced pool work.
    await saver.put(cfg(job.threadId), checkpoint(), META, { messages: 2 });
    expect((await ledger.events(job.jobId)).filter((e) => e.type === 'checkpointed')).toHaveLength(1);
    expect((await saver.getTuple(cfg(job.threadId)))?.checkpoint.channel_values).toEqual({ messages: ['hi'] });
  });

  it('a claim arriving while a put holds the fence waits, then sees the committed checkpoint', async () => {
    const gated = new GatedLedger(db.ledger.pool);
    const job = await claimed(db.ledger, 'w1');
    await backdateLease(db.ledger.pool, job.jobId);
    const put = saverFor(job, gated).put(cfg(job.threadId), checkpoint(), META, { messages: 1 });
    await gated.checked.promise;
    const claim = db.ledger.claim(job.jobId, 'w2');
    expect(await settledWithin(claim, 150)).toBe('pending');
    gated.gate.resolve();
    await put;
    const c = await claim;
    expect(c).toMatchObject({ ok: true, previousStatus: 'running', job: { status: 'running', fencingToken: 2 } });
    expect((await checkpointRows(job.threadId)).checkpoints).toHaveLength(1);
  });

  it('a put whose fence check comes after a newer claim is rolled back', async () => {
    const gated = new GatedLedger(db.ledger.pool);
    gated.gate.resolve();
    const job = await claimed(db.ledger, 'w1');
    await backdateLease(db.ledger.pool, job.jobId);
    expect((await db.ledger.claim(job.jobId, 'w2')).ok).toBe(true);
    const saver = saverFor(job, gated);
    await expect(saver.put(cfg(job.threadId), checkpoint(), META, { messages: 1 })).rejects.toBeInstanceOf(LeaseLostError);
    expect(await checkpointRows(job.threadId)).toEqual({ checkpoints: [], blobs: [], writes: [] });
    expect(await db.ledger.get(job.jobId)).toMatchObject({ status: 'starting', firstCheckpointAt: null, fencingToken: 2 });
  });

  it('under real concurrency a claim racing a put never splits: checkpoint and state agree every time', async () => {
    const { ledger } = db;
    const seen = { committed: 0, rolledBack: 0 };
    for (let i = 0; i < 30; i++) {
      const job = await claimed(ledger, 'w1');
      await backdateLease(ledger.pool, job.jobId);
      const saver = saverFor(job);
      const [put, claim] = await Promise.allSettled([
        saver.put(cfg(job.threadId), checkpoint(), META, { messages: 1 }),
        sleep(i % 4).then(() => ledger.claim(job.jobId, 'w2')),
      ]);
      if (claim.status !== 'fulfilled' || !claim.value.ok) throw new Error(`racing claim failed: ${JSON.stringify(claim)}`);
      const rows = await checkpointRows(job.threadId);
      const types = (await ledger.events(job.jobId)).map((e) => `${e.type}:${e.fencingToken}`);
      if (put.status === 'fulfilled') {
        seen.committed++;
        expect(rows.checkpoints).toHaveLength(1);
        expect(claim.value.job.status).toBe('running');
        expect(types).toEqual(['accepted:0', 'claimed:1', 'checkpointed:1', 'claimed:2']);
      } else {
        seen.rolledBack++;
        expect(put.reason).toBeInstanceOf(LeaseLostError);
        expect(saver.rejectedWrites).toBe(1);
        expect(rows).toEqual({ checkpoints: [], blobs: [], writes: [] });
        expect(claim.value.job.status).toBe('starting');
        expect(types).toEqual(['accepted:0', 'claimed:1', 'claimed:2']);
      }
    }
    expect(seen.committed + seen.rolledBack).toBe(30);
  });
});
