// The ledger behind PgBouncer in transaction mode (Debian's 1.18: no prepared statements kept across
// transactions, the `options` startup parameter refused): with createPool's `pooler`
// (RUNLEDGER_PG_POOLER=transaction) a job's whole life runs through it, many clients on a few
// server connections; without it the named statements fail; and the start-up check says what
// to fix when the pooler does not set the ledger's search_path. docs/decisions/0016-pgbouncer-transaction-mode.md.
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgBouncer } from '../../../chaos/pgbouncer';
import { LinkProxy } from '../../../chaos/proxy';
import { type TestDb, testDb } from '../../../test/support/db';
import { createPool, FencedPostgresSaver, Ledger, LedgerError, requireMigrated } from '../src/index';
import { cfg, checkpoint, META } from './support/checkpoints';

const SERVER_CONNECTIONS = 4;
const CLIENTS = 100;

let db: TestDb;
/** Sets the ledger's path by connect_query and refuses `options`, as a deployment's would. */
let bouncer: PgBouncer;
/** The same, but dropping `options` silently (ignore_startup_parameters): only the prepared statements fail. */
let lenient: PgBouncer;
/** One that sets no search_path. */
let bare: PgBouncer;
const pools: pg.Pool[] = [];
const open = (url: string, pooler?: 'transaction') => {
  const pool = createPool({ connectionString: url, schema: db.schema, max: CLIENTS, pooler, onError: () => {} });
  pools.push(pool);
  return pool;
};

beforeAll(async () => {
  db = await testDb('pgbouncer');
  const common = { target: db.url, poolSize: SERVER_CONNECTIONS, maxClients: 400 };
  [bouncer, lenient, bare] = await Promise.all([
    PgBouncer.start({ ...common, port: 6461, schema: db.schema }),
    PgBouncer.start({ ...common, port: 6462, schema: db.schema, ignoreStartupOptions: true }),
    PgBouncer.start({ ...common, port: 6463, schema: undefined }),
  ]);
});
afterAll(async () => {
  await Promise.all(pools.map((p) => p.end().catch(() => {})));
  await Promise.all([bouncer?.stop(), lenient?.stop(), bare?.stop()]);
  await db?.close();
});

/** Admits, claims, checkpoints through the fenced saver, and completes one job. */
async function lifeOfAJob(ledger: Ledger, i: number): Promise<string> {
  const { job } = await ledger.admit({ graph: 'echo', input: { i } });
  await ledger.recordEnqueued([{ jobId: job.jobId, deliveryId: job.jobId }]);
  const claim = await ledger.claim(job.jobId, `w${i % 7}`, 60_000);
  if (!claim.ok) throw new Error(`claim refused: ${claim.reason}`);
  const saver = new FencedPostgresSaver(ledger, { jobId: job.jobId, fencingToken: claim.job.fencingToken }, { schema: db.schema });
  const saved = await saver.put(cfg(job.threadId), checkpoint([`step of ${i}`]), META, { messages: 1 });
  expect((await saver.getTuple(saved))?.checkpoint.channel_values).toEqual({ messages: [`step of ${i}`] });
  await ledger.complete(job.jobId, claim.job.fencingToken, { i });
  return job.jobId;
}

/** The most server and client connections PgBouncer's admin console shows while `work` runs. */
async function peakConnections(work: Promise<unknown>): Promise<{ servers: number; clients: number }> {
  const admin = createPool({ connectionString: bouncer.url.replace(/\/[^/]*$/, '/pgbouncer'), pooler: 'transaction', max: 1, onError: () => {} });
  pools.push(admin);
  const peak = { servers: 0, clients: 0 };
  let done = false;
  const watching = (async () => {
    while (!done) {
      for (const r of (await admin.query('SHOW POOLS')).rows.filter((r) => r.database !== 'pgbouncer')) {
        peak.servers = Math.max(peak.servers, Number(r.sv_active) + Number(r.sv_idle) + Number(r.sv_used) + Number(r.sv_tested) + Number(r.sv_login));
        peak.clients = Math.max(peak.clients, Number(r.cl_active) + Number(r.cl_waiting));
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  await work.finally(() => {
    done = true;
  });
  await watching;
  return peak;
}

describe('PgBouncer in transaction mode', () => {
  it(`runs ${CLIENTS} jobs' lives at once through ${SERVER_CONNECTIONS} server connections with pooler: transaction`, async () => {
    const pool = open(bouncer.url, 'transaction');
    await requireMigrated(pool, db.schema);
    const ledger = new Ledger(pool);
    const work = Promise.all(Array.from({ length: CLIENTS }, (_, i) => lifeOfAJob(ledger, i)));
    const peak = await peakConnections(work);
    const ids = await work;
    const done = await Promise.all(ids.map((id) => db.ledger.get(id)));
    expect(done.map((j) => j.status)).toEqual(ids.map(() => 'completed'));
    expect(peak.servers).toBeLessThanOrEqual(SERVER_CONNECTIONS);
    expect(peak.clients).toBeGreaterThan(SERVER_CONNECTIONS * 5);
    // connect_query set jit off as the `options` would have.
    expect((await pool.query('SHOW jit')).rows[0].jit).toBe('off');
  });

  it('fails on named statements without pooler (options dropped by the pooler, the prepared statements not kept)', async () => {
    const ledger = new Ledger(open(lenient.url));
    const outcomes = await Promise.allSettled(Array.from({ length: CLIENTS }, (_, i) => lifeOfAJob(ledger, i)));
    const codes = new Set(outcomes.flatMap((o) => (o.status === 'rejected' ? [(o.reason as { code?: string }).code] : [])));
    // 26000 invalid_sql_statement_name: "prepared statement … does not exist"; 42P05: "… already exists".
    expect([...codes].filter((c) => c === '26000' || c === '42P05').length).toBeGreaterThan(0);
  });

  it('refuses to start (POOLER_REFUSED) when the pooler refuses options, naming RUNLEDGER_PG_POOLER', async () => {
    const err = await requireMigrated(open(bouncer.url), db.schema).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LedgerError);
    expect(err).toMatchObject({ code: 'POOLER_REFUSED', message: expect.stringContaining('RUNLEDGER_PG_POOLER=transaction') });
  });

  it('refuses to start (POOLER_REFUSED) when the pooler sets no search_path to the schema, naming connect_query', async () => {
    const err = await requireMigrated(open(bare.url, 'transaction'), db.schema).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'POOLER_REFUSED', message: expect.stringContaining(`connect_query='SET search_path TO ${db.schema}, public`) });
    // The direct connection's own pool passes the same check.
    await expect(requireMigrated(db.ledger.pool, db.schema)).resolves.toBeUndefined();
  });
});

it('answers DATABASE_UNAVAILABLE, not a statement error, while the server behind the pooler is down', async () => {
  const link = await LinkProxy.start(Number(new URL(db.url).port || 5432));
  const target = new URL(db.url);
  target.port = String(link.port);
  const behind = await PgBouncer.start({ target: target.toString(), port: 6464, schema: db.schema, poolSize: 2, queryWaitTimeoutS: 2 });
  try {
    const ledger = new Ledger(open(behind.url, 'transaction'));
    const { job } = await ledger.admit({ graph: 'echo', input: {} });
    await link.close();
    const errors = await Promise.all(Array.from({ length: 5 }, () => ledger.get(job.jobId).catch((e: unknown) => e)));
    // PgBouncer answers itself, SQLSTATE 08P01: "query_wait_timeout" to the connected client whose
    // query waited for a server, "server login has been failing" to new ones. Both mean unreachable.
    expect(errors.map((e) => (e as LedgerError).code)).toEqual(errors.map(() => 'DATABASE_UNAVAILABLE'));
  } finally {
    await behind.stop();
  }
});
