// One tenant's bad cron must not stop any other cron. A thread id POST /v1/jobs refuses is
// refused at cron create and update the same way; rows written around the API (older rows, or
// by hand) are fired in isolation: their times are recorded `failed` with the reason, visible in
// GET /v1/crons/:id and the dashboard, and another tenant's every-second cron fires every second
// on time meanwhile. The producer runs in-process as `runledger producer` builds it.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sleep, type TestDb, testDb } from '../../../test/support/db';
import { createServer, type ProducerServer } from '../src/index';

const KEYS = { acme: 'acme-key-5be0c7a19d2f4e38b6c1', globex: 'globex-key-0d93f4a2c6e14b7f8a25', admin: 'admin-key-e2a84c1f7b0d4963a5f8' };

describe('a failing cron is isolated', () => {
  let db: TestDb;
  let server: ProducerServer;
  let base: string;

  beforeAll(async () => {
    db = await testDb('cron_isolation');
    const env = {
      DB_SCHEMA: db.schema,
      QUEUE_BACKEND: 'postgres',
      LOG_LEVEL: 'silent',
      RUNLEDGER_API_KEYS: `acme:${KEYS.acme},globex:${KEYS.globex}`,
      RUNLEDGER_ADMIN_KEY: KEYS.admin,
      CRON_TICK_MS: '200',
      CRON_MIN_INTERVAL_MS: '1000',
    };
    server = await createServer({ databaseUrl: db.url, port: 0, host: '127.0.0.1', env });
    base = await server.listen();
  });
  afterAll(async () => {
    await server?.close();
    await db?.close();
  });

  const call = async (key: string, method: string, path: string, body?: unknown) => {
    const headers: Record<string, string> = { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) };
    const res = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, body: text.startsWith('{') ? JSON.parse(text) : text };
  };
  const cronCount = async () => (await db.ledger.pool.query('SELECT count(*)::int AS n FROM crons')).rows[0].n as number;

  it('refuses at create and update a thread id that POST /v1/jobs refuses, with the same answer', async () => {
    const job = await call(KEYS.acme, 'POST', '/v1/jobs', { graph: 'echo', input: {}, threadId: '~globex/t' });
    const before = await cronCount();
    const cron = await call(KEYS.acme, 'POST', '/v1/crons', { graph: 'echo', input: {}, threadId: '~globex/t', schedule: '* * * * * *' });
    expect(job.status).toBe(400);
    expect([cron.status, cron.body.error.code]).toEqual([job.status, job.body.error.code]);
    expect(cron.body.error.message).toBe(job.body.error.message);
    // The other admission checks are the same function: an unknown graph, an input the graph refuses.
    const unknown = await call(KEYS.acme, 'POST', '/v1/crons', { graph: 'nope', input: {}, schedule: '* * * * * *' });
    expect([unknown.status, unknown.body.error.code]).toEqual([422, 'unknown_graph']);
    expect(await cronCount()).toBe(before);
  });

  it("keeps firing another tenant's every-second cron on time while bad rows fail, and shows why", async () => {
    // Written around the API, as rows stored before the check would be: a reserved thread id, and
    // a schedule that does not parse.
    const badThread = randomUUID();
    const badSchedule = randomUUID();
    await db.ledger.pool.query(
      `INSERT INTO crons (cron_id, tenant, graph, schedule, input, thread_id, next_fire_at)
       VALUES ($1, 'acme', 'echo', '* * * * * *', '{}', '~globex/stolen', now()), ($2, 'acme', 'echo', 'not a cron', '{}', NULL, now())`,
      [badThread, badSchedule],
    );
    const good = await call(KEYS.globex, 'POST', '/v1/crons', { graph: 'echo', input: { steps: 1 }, schedule: '* * * * * *' });
    expect(good.status).toBe(201);
    await sleep(4_500);

    const rows = (
      await db.ledger.pool.query('SELECT scheduled_at, recorded_at, outcome, job_id, reason FROM cron_firings WHERE cron_id = $1 ORDER BY scheduled_at', [
        good.body.cronId,
      ])
    ).rows as Array<{ scheduled_at: Date; recorded_at: Date; outcome: string; job_id: string | null }>;
    expect(rows.length).toBeGreaterThanOrEqual(4);
    const seconds = rows.map((r) => r.scheduled_at.getTime() / 1000);
    expect(seconds).toEqual(seconds.map((_, i) => (seconds[0] as number) + i));
    for (const r of rows) {
      expect(r.outcome).toBe('admitted');
      expect(r.job_id).not.toBeNull();
      // On time: handled within a tick or two of its second, not held back by the bad crons.
      expect(r.recorded_at.getTime() - r.scheduled_at.getTime()).toBeLessThan(1_000);
    }

    const seen = await call(KEYS.acme, 'GET', `/v1/crons/${badThread}`);
    expect(seen.status).toBe(200);
    expect(seen.body.firings.length).toBeGreaterThanOrEqual(3);
    for (const f of seen.body.firings) {
      expect(f).toMatchObject({ outcome: 'failed', jobId: null });
      expect(f.reason).toContain('threadId must not start with "~"');
    }
    const jobsOfBad = await db.ledger.pool.query("SELECT count(*)::int AS n FROM jobs WHERE metadata->>'cronId' = $1", [badThread]);
    expect(jobsOfBad.rows[0].n).toBe(0);
    // Its input cannot be changed either: the stored thread id is checked as admission checks it.
    const patch = await call(KEYS.acme, 'PATCH', `/v1/crons/${badThread}`, { input: { steps: 2 } });
    expect([patch.status, patch.body.error.code]).toEqual([400, 'invalid_request']);

    // A schedule with no next time is recorded once and switched off, not retried every pass.
    const broken = await call(KEYS.acme, 'GET', `/v1/crons/${badSchedule}`);
    expect(broken.body.enabled).toBe(false);
    expect(broken.body.firings).toHaveLength(1);
    expect(broken.body.firings[0].outcome).toBe('failed');
    expect(broken.body.firings[0].reason).toContain('not a valid cron expression');

    const page = await fetch(`${base}/admin/schedules`, { headers: { authorization: `Bearer ${KEYS.admin}` } });
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toContain(badThread);
    expect(html).toMatch(/failed \([^)]*\): <strong>threadId must not start with &quot;~&quot;/);
  });
});
