import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDb, testDb } from '../../../test/support/db';
import { admissionModes, allJobs, backends, CLOSED_PG_URL, CLOSED_REDIS_URL, type Harness, startHarness } from './harness';

// Real outages, no mocks: the app's Redis or PostgreSQL URL points at a port where nothing
// listens (connection refused), or at a TCP server that accepts and never answers (hung).

let db: TestDb;
beforeAll(async () => {
  db = await testDb('producer_outages');
});
afterAll(() => db?.close());

describe('Redis unreachable at admission', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness('outage_redis', { backend: 'redis', redisUrl: CLOSED_REDIS_URL, db });
  });
  afterAll(() => h?.close());

  it('still admits: 202 enqueued:false, the row exists undelivered for the reconciler', async () => {
    const started = Date.now();
    const r = await h.app.inject({ method: 'POST', url: '/v1/jobs', payload: { graph: 'echo', input: {} } });
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(r.statusCode).toBe(202);
    expect(r.json()).toMatchObject({ status: 'accepted', enqueued: false });
    const job = await db.ledger.get(r.json().jobId);
    // The admission issued its first delivery; no `enqueued` event, since the queue never took it.
    expect(job).toMatchObject({ status: 'accepted', deliveries: 1, deliveryId: job.jobId });
    expect((await db.ledger.events(job.jobId)).map((e) => e.type)).toEqual(['accepted']);
  });

  it('reports not ready with the queue down and the database up', async () => {
    const r = await h.app.inject({ method: 'GET', url: '/readyz' });
    expect(r.statusCode).toBe(503);
    expect(r.json()).toMatchObject({ status: 'not_ready', checks: { database: 'ok', queue: 'unavailable' }, error: { code: 'not_ready' } });
    expect((await h.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });
});

describe('Redis hung at admission', () => {
  let h: Harness;
  let server: Server;
  const sockets = new Set<Socket>();
  beforeAll(async () => {
    // Accepts connections and never says a word: a Redis that stalls rather than refuses.
    server = createServer((s) => {
      sockets.add(s);
      s.on('error', () => {});
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    h = await startHarness('outage_hung', { backend: 'redis', redisUrl: `redis://127.0.0.1:${port}`, db });
  });
  afterAll(async () => {
    await h?.close();
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('answers within the enqueue timeout with enqueued:false', async () => {
    const started = Date.now();
    const r = await h.app.inject({ method: 'POST', url: '/v1/jobs', payload: { graph: 'echo', input: { steps: 1 } } });
    expect(Date.now() - started).toBeLessThan(2_500);
    expect(r.statusCode).toBe(202);
    expect(r.json().enqueued).toBe(false);
    expect((await db.ledger.events(r.json().jobId)).map((e) => e.type)).toEqual(['accepted']);
  });
});

describe.each(admissionModes())('PostgreSQL unreachable ($name)', ({ backend, groupCommit }) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(`outage_pg_${backend}`, { backend, groupCommit, appDatabaseUrl: CLOSED_PG_URL, db });
  });
  afterAll(() => h?.close());

  it('accepts nothing: 503 database_unavailable and no row, no queue message', async () => {
    const before = await allJobs(db);
    const waitingBefore = await h.queue.getWaitingCount();
    const r = await h.app.inject({ method: 'POST', url: '/v1/jobs', payload: { graph: 'echo', input: {}, idempotencyKey: `down-${backend}-${groupCommit}` } });
    expect(r.statusCode).toBe(503);
    expect(r.json()).toEqual({ error: { code: 'database_unavailable', message: expect.stringContaining('PostgreSQL is unreachable') } });
    expect(await allJobs(db)).toEqual(before);
    expect(await h.queue.getWaitingCount()).toBe(waitingBefore);
  });

  it('answers reads with 503 too, and /readyz with 503 naming the database', async () => {
    const read = await h.app.inject({ method: 'GET', url: '/v1/jobs' });
    expect([read.statusCode, read.json().error.code]).toEqual([503, 'database_unavailable']);
    const ready = await h.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json().checks.database).toBe('unavailable');
    expect((await h.app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok', checks: {} });
  });
});

describe.each(backends())('everything up (%s queue)', (backend) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(`ready_${backend}`, { backend, db });
  });
  afterAll(() => h?.close());

  it('is ready', async () => {
    const r = await h.app.inject({ method: 'GET', url: '/readyz' });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({ status: 'ready', checks: { database: 'ok', queue: 'ok' } });
  });

  it('probes PostgreSQL once for a burst of /readyz calls, not once per call', async () => {
    let acquired = 0;
    const onAcquire = () => acquired++;
    h.appLedger.pool.on('acquire', onAcquire);
    try {
      const burst = await Promise.all(Array.from({ length: 10 }, () => h.app.inject({ method: 'GET', url: '/readyz' })));
      for (let i = 0; i < 10; i++) burst.push(await h.app.inject({ method: 'GET', url: '/readyz' }));
      expect(burst.map((r) => r.statusCode)).toEqual(Array(20).fill(200));
      // One probe per READINESS_CACHE_MS (1 s): a second one only if these 20 calls took longer.
      expect(acquired).toBeLessThanOrEqual(2);
    } finally {
      h.appLedger.pool.off('acquire', onAcquire);
    }
  });
});
