import { randomBytes } from 'node:crypto';
import { createPool, Ledger, migrate } from '@runledger/ledger';
import { openQueue, QUEUE_NAME, Reconciler } from '@runledger/queue';
import { loadGraphs } from '@runledger/runtime';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import '../../../test/support/provided';
import { testDb, waitFor } from '../../../test/support/db';
import { buildApp } from '../src/app';
import { fillRedis, type LimitedServer, startLimitedPostgres, startLimitedRedis } from './limited-servers';

// Admission under exhaustion, on servers of the test's own with small limits: a PostgreSQL at
// max_connections answers 503 database_busy and writes nothing; a Redis at maxmemory with
// noeviction still admits (202, enqueued: false); a queue with 100k deliveries no worker has
// taken answers 503 backlog_full. Nothing accepted is lost, and once the
// pressure ends admissions and deliveries resume with no operator step.

const PG_PORT = 7142;
const REDIS_PORT = 7143;
const BACKLOG_REDIS_PORT = 7144;
const servers: LimitedServer[] = [];
afterAll(async () => {
  for (const s of servers.reverse()) await s.stop().catch(() => {});
});

const submit = { method: 'POST' as const, url: '/v1/jobs', payload: { graph: 'echo', input: {} } };

describe('PostgreSQL at max_connections', () => {
  it('answers 503 database_busy, writes nothing, keeps what it accepted, and admits again once connections free up', async () => {
    const server = await startLimitedPostgres(PG_PORT, ['max_connections=8', 'superuser_reserved_connections=0']);
    servers.push(server);
    const schema = `t_exhaust_pg_${randomBytes(3).toString('hex')}`;
    await migrate({ connectionString: server.url, schema });
    const pool = createPool({ connectionString: server.url, schema, max: 4, onError: () => {} });
    const queue = openQueue({ backend: 'redis', redisUrl: inject('redisUrl') ?? undefined, schema, prefix: `{${schema}}` });
    const app = buildApp({ ledger: new Ledger(pool), queue, graphs: await loadGraphs(), schema });
    const hogs: pg.Client[] = [];
    try {
      const accepted: string[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await app.inject(submit);
        expect(res.statusCode).toBe(202);
        accepted.push(res.json().jobId);
      }
      // Take every connection: the app's idle ones are ended, then their slots taken too.
      const hog = async () => {
        const c = new pg.Client({ connectionString: server.url });
        c.on('error', () => {});
        await c.connect();
        hogs.push(c);
      };
      await hog();
      const first = hogs[0] as pg.Client;
      await first.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()");
      for (;;) {
        const refused = await hog().then(
          () => undefined,
          (err: { code?: string }) => err,
        );
        if (refused) {
          expect(refused.code).toBe('53300');
          break;
        }
      }

      const jobsNow = async () => (await first.query(`SELECT job_id FROM ${schema}.jobs ORDER BY job_id`)).rows.map((r) => r.job_id);
      const before = await jobsNow();
      for (let i = 0; i < 3; i++) {
        const res = await app.inject(submit);
        expect(res.statusCode, res.body).toBe(503);
        expect(res.json()).toEqual({ error: { code: 'database_busy', message: expect.stringContaining('max_connections') } });
      }
      expect(await jobsNow()).toEqual(before);

      // The pressure ends: the pool connects again on its own.
      for (const c of hogs.splice(1)) await c.end();
      const again = await waitFor('an admission to pass again', async () => {
        const res = await app.inject(submit);
        return res.statusCode === 202 ? res : undefined;
      });
      expect(again.json().enqueued).toBe(true);
      expect(await jobsNow()).toEqual(expect.arrayContaining([...accepted, again.json().jobId]));
    } finally {
      for (const c of hogs) await c.end().catch(() => {});
      await app.close();
      await queue.close();
      await pool.end();
    }
  });
});

describe('Redis at maxmemory with noeviction', () => {
  it('admits with enqueued: false while Redis refuses writes; the reconciler delivers every job once memory is free', async () => {
    const server = await startLimitedRedis(REDIS_PORT, ['--maxmemory', '8mb', '--maxmemory-policy', 'noeviction']);
    servers.push(server);
    const db = await testDb('exhaust_redis');
    const queue = openQueue({ backend: 'redis', redisUrl: server.url, schema: db.schema, prefix: `{${db.schema}}` });
    const app = buildApp({ ledger: db.ledger, queue, graphs: await loadGraphs(), schema: db.schema, enqueueTimeoutMs: 500 });
    const reconciler = new Reconciler(db.ledger, queue, { graceMs: 0 });
    try {
      const before = await app.inject(submit);
      expect(before.json().enqueued).toBe(true);

      const junk = await fillRedis(server.url);
      expect(junk.keys).toBeGreaterThan(0);
      const during: string[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await app.inject(submit);
        expect(res.statusCode, res.body).toBe(202);
        expect(res.json().enqueued).toBe(false);
        during.push(res.json().jobId);
      }
      // The admissions stand in the ledger while Redis is full.
      for (const jobId of during) expect((await db.ledger.get(jobId)).status).toBe('accepted');

      await junk.free();
      const all = [before.json().jobId as string, ...during];
      await waitFor('every job to reach the queue', async () => {
        await reconciler.sweepOnce().catch(() => undefined);
        const found = await Promise.all(all.map(async (jobId) => (await queue.getJobs(['waiting'], 0, -1)).some((j) => j.data.jobId === jobId)));
        return found.every(Boolean);
      });
      expect((await app.inject(submit)).json().enqueued).toBe(true);
    } finally {
      await reconciler.stop();
      await app.close();
      await queue.close();
      await db.close();
    }
  });
});

describe('a backlog of 100,000 waiting deliveries', () => {
  it('answers 503 backlog_full and writes nothing; admits again once the backlog drains', async () => {
    const server = await startLimitedRedis(BACKLOG_REDIS_PORT, []);
    servers.push(server);
    const db = await testDb('exhaust_backlog');
    const queue = openQueue({ backend: 'redis', redisUrl: server.url, schema: db.schema, prefix: `{${db.schema}}` });
    const app = buildApp({ ledger: db.ledger, queue, graphs: await loadGraphs(), schema: db.schema });
    try {
      const accepted = (await app.inject(submit)).json().jobId as string;
      // 100,000 waiting entries, pushed straight onto BullMQ's wait list: the count is what the
      // producer reads, and addBulk of as many full jobs took 100 s on this loaded 2-core machine.
      const client = new Redis(server.url);
      for (let i = 0; i < 100_000; i += 10_000) {
        await client.lpush(`{${db.schema}}:${QUEUE_NAME}:wait`, ...Array.from({ length: 10_000 }, (_, j) => `filler-${i + j}`));
      }
      await client.quit();
      expect(await queue.getWaitingCount()).toBeGreaterThanOrEqual(100_000);
      // The first count is read when the app sees its first admission after the backlog grew (at most 1 s).
      const refused = await waitFor('a 503', async () => {
        const res = await app.inject(submit);
        return res.statusCode === 503 ? res : undefined;
      });
      expect(refused.json()).toEqual({ error: { code: 'backlog_full', message: expect.stringContaining('MAX_BACKLOG 100000') } });
      const jobs = (await db.ledger.list({ limit: 500 })).jobs.map((j) => j.jobId);
      expect((await app.inject(submit)).statusCode).toBe(503);
      expect((await db.ledger.list({ limit: 500 })).jobs.map((j) => j.jobId)).toEqual(jobs);
      expect(jobs).toContain(accepted);

      await queue.drain();
      const again = await waitFor('an admission to pass again', async () => {
        const res = await app.inject(submit);
        return res.statusCode === 202 ? res : undefined;
      });
      expect(again.json().enqueued).toBe(true);
    } finally {
      await app.close();
      await queue.close();
      await db.close();
    }
  }, 180_000);
});
