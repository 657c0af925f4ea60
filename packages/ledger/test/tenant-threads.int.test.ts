// A thread belongs to its tenant (migration 0005): the thread guards are per (tenant, thread_id),
// LangGraph checkpoints live under langgraph_thread_id(tenant, thread_id), and an existing
// database keeps its threads' history through the migration.
import { randomBytes } from 'node:crypto';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type TestDb, testDb } from '../../../test/support/db';
import { createPool, LedgerError, langGraphThreadId, listMigrations, migrate, ThreadBusyError } from '../src/index';

let db: TestDb;
beforeAll(async () => {
  db = await testDb('tenant_threads');
});
afterAll(() => db.close());

describe('thread keys', () => {
  it('computes the same LangGraph thread id in TypeScript and in SQL', async () => {
    const pairs = [
      ['default', 'order-42'],
      ['default', 'acme/order-42'],
      ['acme', 'order-42'],
      ['acme.eu-1', 'a/b ü'],
    ] as const;
    for (const [tenant, threadId] of pairs) {
      const r = await db.ledger.pool.query('SELECT langgraph_thread_id($1, $2) AS id', [tenant, threadId]);
      expect(r.rows[0].id).toBe(langGraphThreadId(tenant, threadId));
    }
    expect(langGraphThreadId('default', 'x')).toBe('x');
    expect(langGraphThreadId('acme', 'x')).toBe('~acme/x');
  });

  it('refuses a reserved thread id or a malformed tenant with INVALID_REQUEST and writes nothing', async () => {
    const before = (await db.ledger.list({ limit: 500 })).jobs.length;
    for (const req of [
      { tenant: 'default', threadId: '~acme/x' },
      { tenant: 'acme', threadId: '~x' },
      { tenant: 'ac/me', threadId: 'x' },
    ]) {
      const err = await db.ledger.admit({ ...req, graph: 'echo', input: {} }).catch((e) => e);
      expect(err).toBeInstanceOf(LedgerError);
      expect(err.code).toBe('INVALID_REQUEST');
    }
    expect((await db.ledger.list({ limit: 500 })).jobs.length).toBe(before);
  });
});

describe('per-tenant thread guards', () => {
  it('lets two tenants hold a lease on the same thread id at once, and keeps one lease per tenant thread', async () => {
    const threadId = `shared-${randomBytes(3).toString('hex')}`;
    const a1 = (await db.ledger.admit({ tenant: 'acme', graph: 'echo', input: {}, threadId })).job;
    const a2 = (await db.ledger.admit({ tenant: 'acme', graph: 'echo', input: {}, threadId })).job;
    const g1 = (await db.ledger.admit({ tenant: 'globex', graph: 'echo', input: {}, threadId })).job;
    expect((await db.ledger.claim(a1.jobId, 'w1')).ok).toBe(true);
    expect(await db.ledger.claim(a2.jobId, 'w2')).toMatchObject({ ok: false, reason: 'thread_busy', blockedBy: a1.jobId });
    expect((await db.ledger.claim(g1.jobId, 'w3')).ok).toBe(true);
  });

  it('refuses multitask "reject" only for an open job of the same tenant', async () => {
    const threadId = `reject-${randomBytes(3).toString('hex')}`;
    await db.ledger.admit({ tenant: 'acme', graph: 'echo', input: {}, threadId });
    const other = await db.ledger.admit({ tenant: 'globex', graph: 'echo', input: {}, threadId, multitask: 'reject' });
    expect(other.created).toBe(true);
    await expect(db.ledger.admit({ tenant: 'acme', graph: 'echo', input: {}, threadId, multitask: 'reject' })).rejects.toBeInstanceOf(ThreadBusyError);
  });
});

describe('migration 0005 on a database with rows', () => {
  it("moves a tenant's existing checkpoints to its LangGraph thread id; a shared id stays with its first tenant", async () => {
    const url = inject('databaseUrl');
    const schema = `t_tenant_threads_old_${randomBytes(3).toString('hex')}`;
    // The schema as 0001–0003 left it, with LangGraph's tables, jobs and checkpoints.
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(`CREATE SCHEMA ${schema}; SET search_path TO ${schema}`);
      await client.query('CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())');
      for (const m of listMigrations().filter((m) => m.version <= 3)) {
        await client.query(m.text);
        await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
      }
      const setupPool = createPool({ connectionString: url, schema, max: 1 });
      await new PostgresSaver(setupPool, undefined, { schema }).setup();
      await setupPool.end();
      const jobs = [
        ['j1', 'acme', 'acme-only'],
        ['j2', 'default', 'open-thread'],
        ['j3', 'globex', 'shared'],
        ['j4', 'acme', 'shared'],
      ];
      for (const [jobId, tenant, threadId] of jobs) {
        await client.query("INSERT INTO jobs (job_id, tenant, request_hash, graph, thread_id) VALUES ($1, $2, 'h', 'echo', $3)", [jobId, tenant, threadId]);
      }
      for (const threadId of ['acme-only', 'open-thread', 'shared']) {
        await client.query("INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, checkpoint, metadata) VALUES ($1, '', 'c1', '{}', '{}')", [
          threadId,
        ]);
        await client.query("INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type) VALUES ($1, '', 'ch', '1', 'empty')", [threadId]);
        await client.query(
          "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob) VALUES ($1, '', 'c1', 't', 0, 'ch', 'json', '\\x7b7d')",
          [threadId],
        );
      }
    } finally {
      await client.end();
    }
    expect(await migrate({ connectionString: url, schema })).toContain(4);
    const pool = createPool({ connectionString: url, schema, max: 1 });
    try {
      for (const table of ['checkpoints', 'checkpoint_blobs', 'checkpoint_writes']) {
        const r = await pool.query(`SELECT thread_id FROM ${table} ORDER BY thread_id`);
        expect(r.rows.map((x) => x.thread_id)).toEqual(['open-thread', '~acme/acme-only', '~globex/shared']);
      }
    } finally {
      await pool.end();
    }
  });
});
