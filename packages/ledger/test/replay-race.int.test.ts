// replay() moves manual_reconcile → accepted and marks the effects in doubt failed. If those were
// two commits, a worker could claim the replayed job in between and record a new intent that the
// second statement then marks failed: after a crash the next attempt would take it for "not
// called" and call a non-idempotent provider a second time. Both must commit together.
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sleep, type TestDb, testDb } from '../../../test/support/db';
import { Ledger } from '../src/index';

let db: TestDb;
beforeAll(async () => {
  db = await testDb('replay_race');
});
afterAll(() => db.close());

type Query = (text: string | { text: string }, values?: unknown[]) => Promise<unknown>;

/** A pool whose queries (direct or on a checked-out client) run `before` ahead of any statement matching `marker`. */
function hookedPool(pool: pg.Pool, marker: string, before: () => Promise<void>): pg.Pool {
  const hook = (query: Query): Query => {
    return async (text, values) => {
      // The ledger sends hot-path statements as named query objects, the rest as plain text.
      const sqlText = typeof text === 'string' ? text : text.text;
      if (sqlText.includes(marker)) await before();
      return query(text, values);
    };
  };
  const connect = async () => {
    const client = await pool.connect();
    const query = hook(client.query.bind(client) as Query);
    return new Proxy(client, { get: (t, p) => (p === 'query' ? query : Reflect.get(t, p, t)) });
  };
  const query = hook(pool.query.bind(pool) as Query);
  return new Proxy(pool, { get: (t, p) => (p === 'connect' ? connect : p === 'query' ? query : Reflect.get(t, p, t)) });
}

describe('replay', () => {
  it('a worker claiming the replayed job at once keeps its new intent pending', async () => {
    const { ledger } = db;
    const { job } = await ledger.admit({ graph: 'vacation', input: {} });
    const c = await ledger.claim(job.jobId, 'w1');
    if (!c.ok) throw new Error('claim refused');
    await ledger.recordEffectIntent(job.jobId, 1, 'car', 'book_car', 'k-car');
    await ledger.requireManual(job.jobId, 1, 'effect_in_doubt', { effectKey: 'car' });

    // A fast worker: claims the job and records the car intent again, as the recovery would.
    let worker: Promise<unknown> | undefined;
    // A claim that waited for the replay's commit is refused (its snapshot predates it), so it
    // retries as a redelivery would.
    const fastWorker = async () => {
      for (let i = 0; i < 50; i++) {
        const claim = await ledger.claim(job.jobId, 'w2');
        if (claim.ok) return ledger.recordEffectIntent(job.jobId, claim.job.fencingToken, 'car', 'book_car', 'k-car');
        await sleep(10);
      }
      throw new Error('the fast worker never got the replayed job');
    };
    const operator = new Ledger(
      hookedPool(ledger.pool, 'abandon_pending_effects.sql', async () => {
        worker = fastWorker();
        // Long enough for the worker to finish if nothing holds it back; it must not be awaited
        // here, since a correct replay holds the job row until it commits.
        await sleep(200);
      }),
    );
    await operator.replay(job.jobId, undefined, 'provider shows nothing');
    if (!worker) throw new Error('the hook never saw abandon_pending_effects.sql: the race was not staged');
    await worker;

    const car = await ledger.findEffect(job.jobId, 'car');
    // The intent of attempt 2 (token 2) is the one whose outcome is unknown now: it stays pending.
    expect(car).toMatchObject({ status: 'pending', fencingToken: 2, attempts: 2 });
    expect(await ledger.pendingEffects(job.jobId)).toEqual([{ effectKey: 'car', name: 'book_car' }]);
  });
});
