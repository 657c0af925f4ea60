// A worker cut off from PostgreSQL stops its run by its own clock, before the database lets
// another worker claim the job: real PostgreSQL behind the chaos harness's TCP proxy.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LinkProxy } from '../../../chaos/proxy';
import { createPool, LeaseLostError, Ledger } from '../../../packages/ledger/src/index';
import { sleep, type TestDb, testDb, waitFor } from '../../../test/support/db';
import { LeaseKeeper } from '../src/lease-keeper';

const TTL = 1_000;
let db: TestDb;
let proxy: LinkProxy;
let cutOff: Ledger;
let pool: ReturnType<typeof createPool>;

beforeAll(async () => {
  db = await testDb('lease_keeper', { leaseTtlMs: TTL });
  const url = new URL(db.url);
  proxy = await LinkProxy.start(Number(url.port || 5432));
  url.port = String(proxy.port);
  pool = createPool({ connectionString: url.toString(), schema: db.schema, max: 4, onError: () => {} });
  cutOff = new Ledger(pool, { leaseTtlMs: TTL });
});

afterAll(async () => {
  await proxy?.close();
  await pool?.end().catch(() => {});
  await db?.close();
});

it('keeps a renewed lease, and aborts the run before the lease expires in the database once PostgreSQL is unreachable', async () => {
  const { job } = await db.ledger.admit({ graph: 'echo', input: { steps: 1 } });
  const keeper = new LeaseKeeper(cutOff, 'partitioned-worker', 300);
  keeper.start();
  try {
    const sentAt = Date.now();
    const claim = await cutOff.claim(job.jobId, 'partitioned-worker', TTL);
    if (!claim.ok) throw new Error(`claim refused: ${claim.reason}`);
    const controller = keeper.hold(job.jobId, claim.job.fencingToken, sentAt);

    // Heartbeats get through: the lease outlives several TTLs.
    await sleep(3 * TTL);
    expect(controller.signal.aborted).toBe(false);

    proxy.partition('both');
    const cutAt = Date.now();
    await waitFor('the run to be aborted', async () => controller.signal.aborted, 5 * TTL, 10);
    const abortedAt = Date.now();
    expect(controller.signal.reason).toBeInstanceOf(LeaseLostError);
    expect(abortedAt - cutAt).toBeLessThan(TTL);
    // The database still counts the lease as held: no other worker could have claimed it yet.
    const row = await db.ledger.get(job.jobId);
    expect(row.leaseOwner).toBe('partitioned-worker');
    expect(row.leaseExpiresAt?.getTime()).toBeGreaterThan(abortedAt);
    expect(keeper.size).toBe(0);
  } finally {
    keeper.stop();
    proxy.heal();
  }
});
