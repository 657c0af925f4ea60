// The fenced checkpointer (ARCHITECTURE.md, Fencing): a stale attempt's checkpoint or pending write is rolled
// back, the first checkpoint moves starting → running in the same transaction, and a claim
// racing a put either sees the checkpoint (committed first) or makes the put roll back.
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sleep, type TestDb, testDb } from '../../../test/support/db';
import { FencedPostgresSaver, type Job, LeaseLostError, type Ledger } from '../src/index';
import { cfg, checkpoint, META } from './support/checkpoints';
import { backdateLease, settledWithin, warmPool } from './support/jobs';

let db: TestDb;
beforeAll(async () => {
  db = await testDb('fenced_saver');
  await warmPool(db.ledger.pool, 10);
});
afterAll(() => db.close());

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

/**
 * Holds a put inside its one statement, after its fence took the job row lock: an uncommitted
 * checkpoint row with the same key makes the put's checkpoint insert wait for this transaction.
 */
async function holdCheckpoint(threadId: string, checkpointId: string) {
  const client = await db.ledger.pool.connect();
  await client.query('BEGIN');
  await client.query("INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, checkpoint) VALUES ($1, '', $2, '{}')", [threadId, checkpointId]);
  const pid = (await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
  return {
    pid,
    /** Rolls the held row back: the waiting put goes on and commits its own. */
    async release() {
      await client.query('ROLLBACK');
      client.release();
    },
  };
}

/** Leaves `ms` on the job's lease; returns when it ends, in local time. */
async function leaseEndsIn(jobId: string, ms: number): Promise<number> {
  await db.ledger.pool.query('UPDATE jobs SET lease_expires_at = clock_timestamp() + make_interval(secs => $2 / 1000.0) WHERE job_id = $1', [jobId, ms]);
  return Date.now() + ms;
}

/** The backend that waits for a lock `pid` holds, once there is one. */
async function blockedBy(pid: number): Promise<number> {
  for (let i = 0; i < 400; i++) {
    const r = await db.ledger.pool.query('SELECT pid FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid))', [pid]);
    if (r.rows[0]) return r.rows[0].pid as number;
    await sleep(5);
  }
  throw new Error(`no backend waits for ${pid}`);
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

  it.each(['starting', 'running'] as const)(
    'a claim arriving while a put holds the fence (job %s) waits, then sees the committed checkpoint',
    async (state) => {
      const job = await claimed(db.ledger, 'w1');
      const saver = saverFor(job);
      if (state === 'running') await saver.put(cfg(job.threadId), checkpoint(), META, { messages: 1 });
      // The put takes its fence with 1 s left on the lease; the claim comes once the lease ended.
      const ends = await leaseEndsIn(job.jobId, 1_000);
      const cp = checkpoint();
      const hold = await holdCheckpoint(job.threadId, cp.id);
      const put = saver.put(cfg(job.threadId), cp, META, { messages: 2 });
      let claim: ReturnType<Ledger['claim']>;
      try {
        await blockedBy(hold.pid); // the put's statement has its job row lock and waits at its checkpoint insert
        await sleep(ends - Date.now() + 50);
        claim = db.ledger.claim(job.jobId, 'w2');
        expect(await settledWithin(claim, 150)).toBe('pending');
      } finally {
        await hold.release();
      }
      await put;
      const c = await claim;
      expect(c).toMatchObject({ ok: true, previousStatus: 'running', job: { status: 'running', fencingToken: 2 } });
      const rows = await checkpointRows(job.threadId);
      expect(rows.checkpoints).toHaveLength(state === 'running' ? 2 : 1);
      expect(rows.blobs.map((b) => b.version)).toEqual(state === 'running' ? ['1', '2'] : ['2']);
      expect((await db.ledger.events(job.jobId)).filter((e) => e.type === 'checkpointed')).toHaveLength(1);
    },
  );

  it('a put whose fence check comes after a newer claim is rolled back', async () => {
    const job = await claimed(db.ledger, 'w1');
    await backdateLease(db.ledger.pool, job.jobId);
    expect((await db.ledger.claim(job.jobId, 'w2')).ok).toBe(true);
    const saver = saverFor(job);
    await expect(saver.put(cfg(job.threadId), checkpoint(), META, { messages: 1 })).rejects.toBeInstanceOf(LeaseLostError);
    expect(await checkpointRows(job.threadId)).toEqual({ checkpoints: [], blobs: [], writes: [] });
    expect(await db.ledger.get(job.jobId)).toMatchObject({ status: 'starting', firstCheckpointAt: null, fencingToken: 2 });
  });

  // One statement, one snapshot: a claim that commits after the statement began but before it
  // locked the job row must be seen (READ COMMITTED re-checks the newest row version).
  it.each([
    ['put', 'starting'],
    ['put', 'running'],
    ['putWrites', 'starting'],
    ['putWrites', 'running'],
  ] as const)('a %s (job %s) waiting for the job row while a newer claim commits writes nothing', async (call, state) => {
    const job = await claimed(db.ledger, 'w1');
    const saver = saverFor(job);
    const first = state === 'running' ? await saver.put(cfg(job.threadId), checkpoint(), META, { messages: 1 }) : undefined;
    const before = await checkpointRows(job.threadId);
    const eventsBefore = await db.ledger.events(job.jobId);
    // The newer claim, as claim_lease.sql leaves the row (same status, next token), still open.
    const claimer = await db.ledger.pool.connect();
    try {
      await claimer.query('BEGIN');
      await claimer.query("UPDATE jobs SET fencing_token = fencing_token + 1, lease_owner = 'w2', updated_at = now() WHERE job_id = $1", [job.jobId]);
      const pid = (await claimer.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
      const write =
        call === 'put'
          ? saver.put(cfg(job.threadId), checkpoint(), META, { messages: 2 })
          : saver.putWrites(cfg(job.threadId, first?.configurable?.checkpoint_id ?? 'none'), [['messages', 'late']], 'task-late');
      // Its outcome is taken at once: the refusal can arrive before the claimer's COMMIT answers.
      const outcome = write.then(
        () => 'written',
        (err: unknown) => err,
      );
      await blockedBy(pid);
      await claimer.query('COMMIT');
      expect(await outcome).toMatchObject({ name: 'LeaseLostError', jobId: job.jobId, fencingToken: 1 });
    } finally {
      claimer.release();
    }
    expect(saver.rejectedWrites).toBe(1);
    expect(await checkpointRows(job.threadId)).toEqual(before);
    expect(await db.ledger.events(job.jobId)).toEqual(eventsBefore);
    expect(await db.ledger.get(job.jobId)).toMatchObject({ status: state, fencingToken: 2 });
  });

  it('two puts and a write of one starting attempt that meet at the job row are all accepted, with one checkpointed event', async () => {
    const job = await claimed(db.ledger, 'w1');
    const saver = saverFor(job);
    const a = checkpoint();
    const b = checkpoint();
    const hold = await holdCheckpoint(job.threadId, a.id);
    const putA = saver.put(cfg(job.threadId), a, META, { messages: 1 });
    const pidA = await blockedBy(hold.pid).catch(async (err) => {
      await hold.release();
      throw err;
    }); // A moved the job to running (uncommitted) and waits
    // B's snapshot still sees `starting`; it waits for A's row lock, then finds the job running.
    const putB = saver.put(cfg(job.threadId), b, META, { messages: 2 });
    const writes = saver.putWrites(cfg(job.threadId, a.id), [['messages', 'w']], 'task-1');
    try {
      await blockedBy(pidA);
    } finally {
      await hold.release();
    }
    await Promise.all([putA, putB, writes]);
    expect(saver.rejectedWrites).toBe(0);
    const rows = await checkpointRows(job.threadId);
    expect(rows.checkpoints.map((c) => c.checkpoint_id).sort()).toEqual([a.id, b.id].sort());
    expect(rows.writes).toHaveLength(1);
    expect((await db.ledger.events(job.jobId)).filter((e) => e.type === 'checkpointed')).toHaveLength(1);
    expect((await db.ledger.get(job.jobId)).status).toBe('running');
  });

  it('stores pending writes as PostgresSaver does, repeated special channels included', async () => {
    const job = await claimed(db.ledger, 'w1');
    const fenced = saverFor(job);
    const stock = new PostgresSaver(db.ledger.pool, undefined, { schema: db.schema });
    const calls: [string, [string, unknown][]][] = [
      [
        't-plain',
        [
          ['a', 1],
          ['b', { x: 2 }],
          ['a', 3],
        ],
      ],
      [
        't-upsert',
        [
          ['__interrupt__', 'first'],
          ['__error__', 'e1'],
          ['__interrupt__', 'second'],
        ],
      ],
      [
        't-mixed',
        [
          ['a', 1],
          ['__error__', 'e1'],
          ['__error__', 'e2'],
        ],
      ],
      ['t-empty', []],
    ];
    const stored = async (saver: PostgresSaver, threadId: string) => {
      for (const [task, writes] of calls) await saver.putWrites(cfg(threadId, 'cp-1'), writes, task);
      // Twice: the second call meets its own rows (the upsert replaces, the insert keeps).
      await saver.putWrites(cfg(threadId, 'cp-1'), [['__interrupt__', 'third']], 't-upsert');
      await saver.putWrites(cfg(threadId, 'cp-1'), [['a', 'again']], 't-plain');
      const r = await db.ledger.pool.query('SELECT task_id, idx, channel, type, blob FROM checkpoint_writes WHERE thread_id = $1 ORDER BY task_id, idx', [
        threadId,
      ]);
      return r.rows;
    };
    const mine = await stored(fenced, job.threadId);
    expect(mine.length).toBeGreaterThan(0);
    expect(mine).toEqual(await stored(stock, `${job.threadId}-stock`));
    expect(fenced.rejectedWrites).toBe(0);
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
