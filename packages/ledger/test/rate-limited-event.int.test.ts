// A job held back by its graph's limit gets one `rate_limited` event per hold-back episode (an
// attempt), whatever held it back: the concurrency limit, the window, or a claim that gave up
// waiting for the limit row behind other claims (a lock timeout, which wrote no event before).
// Retries inside an episode add nothing; a later episode (the job ran, was released and is held
// back again) adds one; a refused delivery of a job that runs already (a duplicate) adds none.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDb, testDb } from '../../../test/support/db';
import type { Ledger } from '../src/index';

let db: TestDb;
beforeAll(async () => {
  db = await testDb('rate_limited_event');
});
afterAll(() => db.close());

const held = async (ledger: Ledger, jobId: string) =>
  (await ledger.events(jobId)).filter((e) => e.type === 'rate_limited').map((e) => ({ attempt: e.attempt, reason: e.detail.reason }));

describe('rate_limited events', () => {
  it('are written once per episode, for a full limit and for a claim that timed out on the limit row', async () => {
    const { ledger } = db;
    const graph = 'limited-once';
    await ledger.limits.set(graph, { maxConcurrent: 1 });
    const admit = async () => (await ledger.admit({ graph, input: {} })).job.jobId;
    const [a, b, c] = [await admit(), await admit(), await admit()];

    const first = await ledger.claimLimited(a, 'w1');
    expect(first.ok).toBe(true);
    for (let i = 0; i < 5; i++) expect(await ledger.claimLimited(b, 'w1')).toMatchObject({ ok: false, reason: 'rate_limited' });
    expect(await held(ledger, b)).toEqual([{ attempt: 0, reason: 'concurrency' }]);

    // Another claim holds the limit row past the claim's lock wait (1 s): held back, with its event.
    const blocker = await ledger.pool.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('SELECT graph FROM graph_limits WHERE graph = $1 FOR UPDATE', [graph]);
      expect(await ledger.claimLimited(c, 'w1')).toMatchObject({ ok: false, reason: 'rate_limited' });
      expect(await ledger.claimLimited(c, 'w1')).toMatchObject({ ok: false, reason: 'rate_limited' });
    } finally {
      await blocker.query('ROLLBACK');
      blocker.release();
    }
    expect(await held(ledger, c)).toEqual([{ attempt: 0, reason: 'contention' }]);
    expect((await ledger.get(c)).status).toBe('accepted');

    // b runs (attempt 1), is released, and is held back again: a second episode, a second event.
    if (!first.ok) throw new Error('unreachable');
    await ledger.complete(a, first.job.fencingToken, {});
    const run = await ledger.claimLimited(b, 'w1');
    if (!run.ok) throw new Error(`b was refused: ${run.reason}`);
    await ledger.release(b, run.job.fencingToken);
    expect((await ledger.claimLimited(c, 'w1')).ok).toBe(true);
    expect(await ledger.claimLimited(b, 'w1')).toMatchObject({ ok: false, reason: 'rate_limited' });
    expect(await ledger.claimLimited(b, 'w1')).toMatchObject({ ok: false, reason: 'rate_limited' });
    expect(await held(ledger, b)).toEqual([
      { attempt: 0, reason: 'concurrency' },
      { attempt: 1, reason: 'concurrency' },
    ]);
    // A delivery of c that times out on the limit row while c runs (another delivery claimed it)
    // is no hold-back: it is answered as the claim would be, and writes nothing.
    const again = await ledger.pool.connect();
    try {
      await again.query('BEGIN');
      await again.query('SELECT graph FROM graph_limits WHERE graph = $1 FOR UPDATE', [graph]);
      expect(await ledger.claimLimited(c, 'w1')).toMatchObject({ ok: false, reason: 'lease_held' });
    } finally {
      await again.query('ROLLBACK');
      again.release();
    }
    expect(await held(ledger, c)).toEqual([{ attempt: 0, reason: 'contention' }]);
    // The limit's own view counts the jobs whose current episode is held back.
    expect((await ledger.limits.list()).find((l) => l.graph === graph)).toMatchObject({ running: 1, heldBack: 1 });
  }, 30_000);
});
