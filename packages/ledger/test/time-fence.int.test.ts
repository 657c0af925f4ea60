// The fence is a token and a time (ARCHITECTURE.md, Fencing): once a lease is past its expiry by
// the database clock, its holder cannot write with its current token even though no sweep has
// moved the job and no other worker has claimed it, and a heartbeat cannot bring it back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sleep, type TestDb, testDb } from '../../../test/support/db';
import { FencedPostgresSaver, type Job, LeaseLostError, RunStreamLog } from '../src/index';
import { cfg, checkpoint, META } from './support/checkpoints';
import { backdateLease, snapshot, warmPool } from './support/jobs';
import { STALE_WRITES } from './support/stale-writes';

let db: TestDb;
let streams: RunStreamLog;
beforeAll(async () => {
  db = await testDb('time_fence');
  streams = new RunStreamLog(db.ledger.pool);
  await warmPool(db.ledger.pool, 4);
});
afterAll(() => db.close());

/** Everything a write of the job could touch: its row, events, effects, checkpoint rows and stream. */
async function everything(job: Job) {
  const rows = async (sql: string, id: string) => (await db.ledger.pool.query(sql, [id])).rows;
  return {
    ...(await snapshot(db.ledger.pool, job.jobId)),
    checkpoints: await rows('SELECT * FROM checkpoints WHERE thread_id = $1 ORDER BY checkpoint_id', job.threadId),
    writes: await rows('SELECT * FROM checkpoint_writes WHERE thread_id = $1 ORDER BY task_id, idx', job.threadId),
    stream: await rows('SELECT * FROM run_stream_events WHERE job_id = $1 ORDER BY event_id', job.jobId),
  };
}

/** A job claimed by w1 (token 1) with a pending effect, in `state`, its saver, and its first checkpoint id when running. */
async function heldJob(state: 'starting' | 'running') {
  const { ledger } = db;
  const { job } = await ledger.admit({ graph: 'echo', input: {} });
  const c = await ledger.claim(job.jobId, 'w1', 60_000);
  if (!c.ok) throw new Error(`claim refused: ${c.reason}`);
  await ledger.recordEffectIntent(job.jobId, 1, 'book-old', 'book', 'idem-old');
  const saver = new FencedPostgresSaver(ledger, { jobId: job.jobId, fencingToken: 1 }, { schema: db.schema });
  // Running: the saver's own first put moved the job, so its next put takes the running-only statement.
  const first = state === 'running' ? await saver.put(cfg(job.threadId), checkpoint(), META, { messages: 1 }) : undefined;
  return { job: await ledger.get(job.jobId), saver, checkpointId: first?.configurable?.checkpoint_id as string | undefined };
}

describe.each(['starting', 'running'] as const)('a %s lease past its expiry, not yet swept', (state) => {
  it('refuses every write of its holder under the current token and changes nothing', async () => {
    const { ledger } = db;
    const { job, saver, checkpointId } = await heldJob(state);
    expect(job).toMatchObject({ status: state, fencingToken: 1, leaseOwner: 'w1' });
    await backdateLease(ledger.pool, job.jobId);
    const before = await everything(job);

    for (const [verb, write] of Object.entries(STALE_WRITES)) {
      await expect(write(ledger, job.jobId, 1), verb).rejects.toMatchObject({ code: 'LEASE_LOST', jobId: job.jobId, fencingToken: 1 });
    }
    expect(await ledger.heartbeat('w1', [{ jobId: job.jobId, token: 1 }])).toEqual([job.jobId]);
    expect(await ledger.recordCheckpoint(job.jobId, 1)).toBe(false);
    await expect(saver.put(cfg(job.threadId), checkpoint(), META, { messages: 2 })).rejects.toBeInstanceOf(LeaseLostError);
    await expect(saver.putWrites(cfg(job.threadId, checkpointId), [['messages', 'late']], 'task-late')).rejects.toBeInstanceOf(LeaseLostError);
    await expect(streams.append(job.jobId, 1, [{ event: 'values', data: { late: true } }])).rejects.toBeInstanceOf(LeaseLostError);
    expect(await everything(job)).toEqual(before);

    // The sweep then moves it as usual and the next claim takes the job under a new token.
    expect((await ledger.upkeep.sweep({ graceMs: 60_000 })).expired).toContain(job.jobId);
    const next = await ledger.claim(job.jobId, 'w2');
    expect(next.ok && next.job.fencingToken).toBe(2);
  });
});

describe('the time fence at the edge', () => {
  it('a heartbeat renews a lease with time left and refuses one whose time is up', async () => {
    const { ledger } = db;
    const { job } = await heldJob('running');
    const setExpiry = (sql: string) => ledger.pool.query(`UPDATE jobs SET lease_expires_at = ${sql} WHERE job_id = $1`, [job.jobId]);
    const expiry = async () => (await ledger.get(job.jobId)).leaseExpiresAt?.getTime() ?? 0;

    await setExpiry("clock_timestamp() + interval '300 ms'");
    const soon = await expiry();
    expect(await ledger.heartbeat('w1', [{ jobId: job.jobId, token: 1 }], 60_000)).toEqual([]);
    expect(await expiry()).toBeGreaterThan(soon + 50_000);

    await setExpiry("clock_timestamp() - interval '1 ms'");
    const ended = await expiry();
    expect(await ledger.heartbeat('w1', [{ jobId: job.jobId, token: 1 }], 60_000)).toEqual([job.jobId]);
    expect(await expiry()).toBe(ended);
    await expect(ledger.complete(job.jobId, 1, { late: true })).rejects.toBeInstanceOf(LeaseLostError);
    expect(await ledger.get(job.jobId)).toMatchObject({ status: 'running', fencingToken: 1, result: null });
  });

  it('a completion that waited on the job row is judged by the clock when it gets the row', async () => {
    const { ledger } = db;
    const { job } = await heldJob('running');
    // Another transaction changes the row, leaving 300 ms on the lease, and holds it for 600 ms.
    const other = await ledger.pool.connect();
    try {
      await other.query('BEGIN');
      await other.query("UPDATE jobs SET lease_expires_at = clock_timestamp() + interval '300 ms' WHERE job_id = $1", [job.jobId]);
      const completion = ledger.complete(job.jobId, 1, { late: true }).then(
        () => 'completed',
        (e: unknown) => e,
      );
      await sleep(600);
      await other.query('COMMIT');
      // It reached the database while the lease had time left; it got the row after the lease's end.
      expect(await completion).toBeInstanceOf(LeaseLostError);
    } finally {
      other.release();
    }
    expect(await ledger.get(job.jobId)).toMatchObject({ status: 'running', fencingToken: 1, result: null });
    expect((await ledger.events(job.jobId)).map((e) => e.type)).not.toContain('completed');
  });
});
