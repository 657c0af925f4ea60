// A worker whose pool is busy (every connection taken, runs queued for one) still renews its
// leases: heartbeats go through a ledger of their own (`leaseLedger`), so they never wait behind
// the runs' statements past the lease (window N's clock would otherwise abort the runs).
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { createPool, Ledger } from '../../../packages/ledger/src/index';
import { loadGraphs } from '../../../packages/runtime/src/index';
import { sleep, type TestDb, testDb } from '../../../test/support/db';
import { queueConfigFor, submit, waitForStatus } from '../../../test/support/stack';
import { RunledgerWorker } from '../src/index';
import '../../../test/support/provided';

const TTL = 1_500;
let db: TestDb;
const pools: Array<ReturnType<typeof createPool>> = [];
let worker: RunledgerWorker | undefined;

beforeAll(async () => {
  db = await testDb('heartbeat_pool', { leaseTtlMs: TTL });
});

afterAll(async () => {
  await worker?.close();
  for (const p of pools) await p.end().catch(() => {});
  await db?.close();
});

it('renews the leases while every connection of the runs’ pool is held past the lease', async () => {
  const pool = (max: number) => {
    const p = createPool({ connectionString: db.url, schema: db.schema, max, onError: () => {} });
    pools.push(p);
    return new Ledger(p, { leaseTtlMs: TTL });
  };
  const runs = pool(1);
  const q = queueConfigFor(inject('redisUrl') ? 'redis' : 'postgres', db.url, db.schema, inject('redisUrl'));
  worker = new RunledgerWorker({
    ledger: runs,
    leaseLedger: pool(1),
    queueConfig: q,
    graphs: await loadGraphs(),
    workerId: 'busy-pool',
    schema: db.schema,
    concurrency: 1,
    heartbeatMs: 300,
    sweepIntervalMs: 60_000,
  });
  await worker.start();
  const job = await submit(db.ledger, q, { graph: 'echo', input: { steps: 1, sleepMs: 3 * TTL } });
  await waitForStatus(db.ledger, job.jobId, ['running']);
  // The runs' only connection, held for twice the lease.
  const held = await runs.pool.connect();
  await sleep(2 * TTL);
  held.release();
  const done = await waitForStatus(db.ledger, job.jobId, ['completed', 'failed'], 30_000);
  expect(done.status).toBe('completed');
  expect(done.attempt).toBe(1);
  const types = (await db.ledger.events(job.jobId)).map((e) => e.type);
  expect(types).not.toContain('recovery_required');
});
