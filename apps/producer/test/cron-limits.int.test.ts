// Crons are an admission path, so they are metered like one: a cap per tenant (429
// limit_reached), a minimum interval (422 schedule_too_frequent, 60 s by default), firings that
// spend the tenant's rate bucket when RATE_LIMIT_PER_SECOND is set (a time over the rate is
// recorded `failed`, not admitted), and a paged GET /v1/crons. The producer runs in-process as
// `runledger producer` builds it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Crons } from '../../../packages/ledger/src/index';
import { sleep, testDb } from '../../../test/support/db';
import { createServer } from '../src/index';

const KEYS = { acme: 'acme-key-71c4e0b9a2d34f5c8e16', globex: 'globex-key-4f2a9d06b8c1473e9a5d' };

async function start(name: string, extra: Record<string, string>) {
  const db = await testDb(name);
  const env = { DB_SCHEMA: db.schema, QUEUE_BACKEND: 'postgres', LOG_LEVEL: 'silent', RUNLEDGER_API_KEYS: `acme:${KEYS.acme},globex:${KEYS.globex}`, ...extra };
  const server = await createServer({ databaseUrl: db.url, port: 0, host: '127.0.0.1', env });
  const base = await server.listen();
  const call = async (key: string, method: string, path: string, body?: unknown) => {
    const headers: Record<string, string> = { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) };
    const res = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, body: await res.json() };
  };
  return { db, server, call };
}

describe('cron limits and paging', () => {
  let s: Awaited<ReturnType<typeof start>>;
  beforeAll(async () => {
    s = await start('cron_limits', { CRON_MAX_PER_TENANT: '3', CRON_TICK_MS: '0' });
  });
  afterAll(async () => {
    await s?.server.close();
    await s?.db.close();
  });
  const count = async (tenant: string) => (await s.db.ledger.pool.query('SELECT count(*)::int AS n FROM crons WHERE tenant = $1', [tenant])).rows[0].n;
  const hourly = { graph: 'echo', input: {}, schedule: '0 * * * *' };

  it('refuses a schedule firing more often than CRON_MIN_INTERVAL_MS (60 s by default), at create and update', async () => {
    // The last fires once a day, twice 30 s apart: the shortest gap counts, not the average.
    for (const schedule of ['* * * * * *', '*/30 * * * * *', '0,30 0 3 * * *']) {
      const r = await s.call(KEYS.acme, 'POST', '/v1/crons', { ...hourly, schedule });
      expect([r.status, r.body.error.code], schedule).toEqual([422, 'schedule_too_frequent']);
      expect(r.body.error.message).toContain('CRON_MIN_INTERVAL_MS');
    }
    expect(await count('acme')).toBe(0);
    const ok = await s.call(KEYS.acme, 'POST', '/v1/crons', { ...hourly, schedule: '* * * * *' });
    expect(ok.status).toBe(201);
    const patch = await s.call(KEYS.acme, 'PATCH', `/v1/crons/${ok.body.cronId}`, { schedule: '*/10 * * * * *' });
    expect([patch.status, patch.body.error.code]).toEqual([422, 'schedule_too_frequent']);
    expect((await s.call(KEYS.acme, 'GET', `/v1/crons/${ok.body.cronId}`)).body.schedule).toBe('* * * * *');
  });

  it('caps the crons of each tenant at CRON_MAX_PER_TENANT, also under concurrent creates', async () => {
    for (let i = await count('acme'); i < 3; i++) expect((await s.call(KEYS.acme, 'POST', '/v1/crons', hourly)).status).toBe(201);
    const over = await s.call(KEYS.acme, 'POST', '/v1/crons', hourly);
    expect([over.status, over.body.error.code]).toEqual([429, 'limit_reached']);
    expect(over.body.error.message).toContain('CRON_MAX_PER_TENANT');
    expect(await count('acme')).toBe(3);
    // Another tenant has its own cap; six creates at once leave it at exactly three.
    const answers = await Promise.all(Array.from({ length: 6 }, () => s.call(KEYS.globex, 'POST', '/v1/crons', hourly)));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 201, 201, 429, 429, 429]);
    expect(await count('globex')).toBe(3);
  });

  it('pages GET /v1/crons oldest first with nextCursor, within the tenant', async () => {
    const ledgerCrons = new Crons(s.db.ledger);
    for (let i = 0; i < 4; i++) await ledgerCrons.create({ tenant: 'acme', ...hourly });
    const expected = (await s.db.ledger.pool.query("SELECT cron_id FROM crons WHERE tenant = 'acme' ORDER BY created_at, cron_id")).rows.map((r) => r.cron_id);
    expect(expected).toHaveLength(7);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r = await s.call(KEYS.acme, 'GET', `/v1/crons?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(r.status).toBe(200);
      expect(r.body.crons.length).toBeLessThanOrEqual(3);
      seen.push(...r.body.crons.map((c: { cronId: string }) => c.cronId));
      cursor = r.body.nextCursor;
      pages++;
    } while (cursor);
    expect(seen).toEqual(expected);
    expect(pages).toBe(3);
    const first = await s.call(KEYS.acme, 'GET', '/v1/crons');
    expect(first.body.crons).toHaveLength(7);
    expect(first.body.nextCursor).toBeNull();
    const other = await s.call(KEYS.globex, 'GET', '/v1/crons');
    expect(other.body.crons.every((c: { cronId: string }) => !expected.includes(c.cronId))).toBe(true);
    const bad = await s.call(KEYS.acme, 'GET', '/v1/crons?cursor=nope');
    expect([bad.status, bad.body.error.code]).toEqual([400, 'invalid_request']);
  });
});

describe('cron firings spend the tenant rate bucket', () => {
  let s: Awaited<ReturnType<typeof start>>;
  beforeAll(async () => {
    s = await start('cron_rate', { RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '2', CRON_TICK_MS: '200', CRON_MIN_INTERVAL_MS: '1000' });
  });
  afterAll(async () => {
    await s?.server.close();
    await s?.db.close();
  });

  it("admits acme's firings at its rate and records the rest failed, while globex's fire", async () => {
    // Stored through the ledger, so no request spends a token.
    const crons = new Crons(s.db.ledger);
    const every = { graph: 'echo', input: {}, schedule: '* * * * * *' };
    for (let i = 0; i < 10; i++) await crons.create({ tenant: 'acme', ...every });
    await crons.create({ tenant: 'globex', ...every });
    const from = Date.now();
    await sleep(4_000);
    const seconds = (Date.now() - from) / 1000;
    const outcomes = async (tenant: string) =>
      (
        await s.db.ledger.pool.query(
          'SELECT f.outcome, f.reason, f.job_id FROM cron_firings f JOIN crons c USING (cron_id) WHERE c.tenant = $1 ORDER BY f.scheduled_at',
          [tenant],
        )
      ).rows as Array<{ outcome: string; reason: string | null; job_id: string | null }>;
    const acme = await outcomes('acme');
    const admitted = acme.filter((r) => r.outcome === 'admitted');
    const failed = acme.filter((r) => r.outcome === 'failed');
    // About 10 times a second were due; the bucket (burst 2, 1 per second) admits a few.
    expect(acme.length).toBeGreaterThanOrEqual(30);
    expect(admitted.length).toBeGreaterThanOrEqual(2);
    expect(admitted.length).toBeLessThanOrEqual(2 + Math.ceil(seconds) + 1);
    expect(failed.length).toBe(acme.length - admitted.length);
    for (const f of failed) expect([f.job_id, f.reason]).toEqual([null, expect.stringContaining('RATE_LIMIT_PER_SECOND')]);
    const jobs = await s.db.ledger.pool.query("SELECT count(*)::int AS n FROM jobs WHERE tenant = 'acme'");
    expect(jobs.rows[0].n).toBe(admitted.length);
    // globex's bucket is its own: one cron a second stays within it.
    const g = await outcomes('globex');
    expect(g.length).toBeGreaterThanOrEqual(3);
    expect(g.filter((r) => r.outcome === 'admitted').length).toBeGreaterThanOrEqual(g.length - 1);
    // The bucket is the one acme's requests spend: its crons keep it empty (ten firings a second
    // against one token a second), so of a few requests one is refused, however slow the machine.
    const statuses: number[] = [];
    for (let i = 0; i < 5 && !statuses.includes(429); i++) {
      statuses.push((await s.call(KEYS.acme, 'GET', `/v1/crons?limit=1`)).status);
      await sleep(150);
    }
    expect(statuses).toContain(429);
  });
});
