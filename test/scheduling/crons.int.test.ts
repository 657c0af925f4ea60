// Crons through the ledger: a cron every 2 s, fired by two producers, one of them restarted and
// Redis flushed meanwhile, then every producer down for 16 s. The ledger's firing records must
// hold every scheduled time of the window exactly once, each admitted once (one job per time,
// keyed cron id + time), and after the outage the cron's missed-firing policy: run-once admits
// the latest missed time once, skip admits none; both record every missed time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sleep, type TestDb, testDb } from '../support/db';
import { type Proc, queueConfigFor, stackEnv } from '../support/stack';
import { killAll, ownRedis, post, startProducer } from './own-stack';

// The grace is wide enough that a producer slowed by a loaded machine (two cores, load ~25 in CI)
// still fires on time: with 1.5 s one firing before the outage was once recorded late.
const GRACE_MS = 4_000;
const OUTAGE_MS = 16_000;

describe('crons', () => {
  let db: TestDb;
  let redis: Awaited<ReturnType<typeof ownRedis>>;
  let env: NodeJS.ProcessEnv;
  const procs: Proc[] = [];
  const add = (p: Proc) => {
    procs.push(p);
    return p;
  };

  beforeAll(async () => {
    db = await testDb('crons');
    redis = await ownRedis(7132);
    env = stackEnv(queueConfigFor('redis', db.url, db.schema, redis.url), db.url, db.schema, {
      CRON_TICK_MS: '200',
      CRON_MISFIRE_GRACE_MS: String(GRACE_MS),
      CRON_MIN_INTERVAL_MS: '2000',
    });
  });
  afterAll(async () => {
    await killAll(procs);
    await redis?.stop();
    await db?.close();
  });

  async function firings(cronId: string) {
    const r = await db.ledger.pool.query(
      `SELECT f.scheduled_at, f.recorded_at, f.outcome, f.job_id, j.idempotency_key, j.metadata->>'scheduledAt' AS job_time
         FROM cron_firings f LEFT JOIN jobs j ON j.job_id = f.job_id WHERE f.cron_id = $1 ORDER BY f.scheduled_at`,
      [cronId],
    );
    return r.rows as Array<{
      scheduled_at: Date;
      recorded_at: Date;
      outcome: string;
      job_id: string | null;
      idempotency_key: string | null;
      job_time: string | null;
    }>;
  }

  it('fires every scheduled time once across two producers, a restart, a flush and an outage', async () => {
    const a = await startProducer(env, add);
    const b = await startProducer(env, add);
    const created: Record<string, string> = {};
    for (const missed of ['run-once', 'skip']) {
      const { status, body } = await post(`${a.url}/v1/crons`, { graph: 'echo', input: { steps: 1 }, schedule: '*/2 * * * * *', missed });
      expect(status).toBe(201);
      created[missed] = body.cronId;
    }
    await sleep(5_000);
    a.proc.kill('SIGKILL');
    await a.proc.exited;
    await redis.flushAll();
    await startProducer(env, add);
    await sleep(4_000);
    // Every producer down for OUTAGE_MS.
    const outageFrom = Date.now();
    await killAll(procs);
    await sleep(OUTAGE_MS);
    await startProducer(env, add);
    const backAt = Date.now();
    await sleep(5_000);
    await killAll(procs);
    expect(b.url).not.toBe(a.url);

    for (const [policy, cronId] of Object.entries(created)) {
      const rows = await firings(cronId);
      const times = rows.map((r) => r.scheduled_at.getTime());
      // Exactly the expected scheduled times: every even second from the first to the last, once each.
      expect(times.length).toBeGreaterThan(12);
      times.forEach((t, i) => {
        expect(t % 2_000).toBe(0);
        if (i > 0) expect(t - (times[i - 1] ?? 0)).toBe(2_000);
      });
      // Each admitted time has one job, keyed cron id + time, for that time; missed ones have none.
      for (const r of rows) {
        if (r.outcome === 'missed') expect(r.job_id).toBeNull();
        else {
          expect(r.idempotency_key).toBe(`cron:${cronId}:${r.scheduled_at.toISOString()}`);
          expect(r.job_time).toBe(r.scheduled_at.toISOString());
        }
      }
      const jobs = await db.ledger.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE idempotency_key LIKE $1`, [`cron:${cronId}:%`]);
      expect(jobs.rows[0].n).toBe(rows.filter((r) => r.outcome !== 'missed').length);
      // Before the outage one producer was always up: every time was admitted on time.
      const before = rows.filter((r) => r.scheduled_at.getTime() < outageFrom - 500);
      expect(before.every((r) => r.outcome === 'admitted')).toBe(true);
      // The outage, as the ledger shows it: times handled more than the grace after they were due.
      const late = rows.filter((r) => r.recorded_at.getTime() - r.scheduled_at.getTime() > GRACE_MS);
      expect(late.length).toBeGreaterThanOrEqual(4);
      expect(late.every((r) => r.scheduled_at.getTime() >= outageFrom - 2_000 && r.scheduled_at.getTime() < backAt)).toBe(true);
      expect(rows.filter((r) => !late.includes(r)).every((r) => r.outcome === 'admitted')).toBe(true);
      const outcomes = late.map((r) => r.outcome);
      if (policy === 'run-once') {
        // The latest missed time runs once, late; the others are recorded as missed.
        expect(outcomes).toEqual([...late.slice(1).map(() => 'missed'), 'caught_up']);
      } else {
        expect(outcomes.every((o) => o === 'missed')).toBe(true);
      }
    }
  }, 400_000);
});
