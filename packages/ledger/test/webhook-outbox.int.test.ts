// The webhook outbox (migration 0022): one row per end of a run that has a webhook, written by the
// trigger in the transaction of that end; claims that never hand one row to two senders at once;
// attempts recorded with their answers; the URL sealed at rest.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDb, testDb } from '../../../test/support/db';
import { AesGcmPayloadCodec, Ledger, WebhookOutbox } from '../src/index';

const URL_ = 'https://hooks.example.com/runs?token=secret-in-url';
let db: TestDb;
let outbox: WebhookOutbox;
beforeAll(async () => {
  db = await testDb('webhook_outbox');
  outbox = new WebhookOutbox(db.ledger);
});
afterAll(() => db?.close());

const rows = async (jobId: string) =>
  (await db.ledger.pool.query('SELECT run_status, state FROM webhook_deliveries WHERE job_id = $1 ORDER BY ended_at', [jobId])).rows;

async function running(ledger: Ledger, webhook?: string) {
  const { job } = await ledger.admit({ graph: 'echo', input: {}, webhook });
  const claim = await ledger.claim(job.jobId, 'w1', 60_000);
  if (!claim.ok) throw new Error(`claim refused: ${claim.reason}`);
  return { jobId: job.jobId, token: claim.job.fencingToken };
}

describe('webhook outbox', () => {
  it('writes one delivery per run end (interrupted, then completed), none for other updates or for a run without a webhook', async () => {
    const { ledger } = db;
    const { jobId, token } = await running(ledger, URL_);
    await ledger.recordCheckpoint(jobId, token);
    await ledger.heartbeat('w1', [{ jobId, token }]);
    expect(await rows(jobId)).toEqual([]);
    await ledger.park(jobId, token, { question: 'ok?' });
    await ledger.resume(jobId, 'yes');
    const again = await ledger.claim(jobId, 'w2', 60_000);
    if (!again.ok) throw new Error('claim refused');
    await ledger.complete(jobId, again.job.fencingToken, { done: true });
    expect(await rows(jobId)).toEqual([
      { run_status: 'interrupted', state: 'pending' },
      { run_status: 'completed', state: 'pending' },
    ]);
    const plain = await running(ledger);
    await ledger.complete(plain.jobId, plain.token, {});
    expect(await rows(plain.jobId)).toEqual([]);
    expect(await outbox.ofJob(plain.jobId)).toEqual({ hasWebhook: false, deliveries: [] });
  });

  it('covers a cancel of a job that never ran', async () => {
    const { job } = await db.ledger.admit({ graph: 'echo', input: {}, webhook: URL_ });
    await db.ledger.cancel(job.jobId);
    expect(await rows(job.jobId)).toEqual([{ run_status: 'cancelled', state: 'pending' }]);
  });

  it('hands each due delivery to one of two concurrent claims, then records attempts until delivered', async () => {
    const { ledger } = db;
    await ledger.pool.query("UPDATE webhook_deliveries SET state = 'gave_up'");
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const { jobId, token } = await running(ledger, URL_);
      await ledger.complete(jobId, token, { i });
      ids.push(jobId);
    }
    const [a, b] = await Promise.all([outbox.claim(4, 60_000), outbox.claim(4, 60_000)]);
    const claimed = [...(a ?? []), ...(b ?? [])];
    expect(claimed.map((c) => c.job.jobId).sort()).toEqual([...ids].sort());
    expect(new Set(claimed.map((c) => c.deliveryId)).size).toBe(6);
    // Claimed rows are not due again while the claim holds.
    expect(await outbox.claim(10, 60_000)).toEqual([]);
    const first = claimed[0];
    if (!first) throw new Error('nothing claimed');
    expect(first).toMatchObject({ url: URL_, runStatus: 'completed', attempt: 1 });
    const failed = await outbox.record(first.deliveryId, 1, { statusCode: 503, error: null, delivered: false, backoffMs: 0, retryForMs: 60_000 });
    expect(failed).toBe('pending');
    const [retry] = await outbox.claim(10, 60_000);
    expect(retry).toMatchObject({ deliveryId: first.deliveryId, attempt: 2 });
    // A claim that ran out (attempt 1) no longer settles the row; the current one does.
    expect(await outbox.record(first.deliveryId, 1, { statusCode: 200, error: null, delivered: true, backoffMs: 0, retryForMs: 60_000 })).toBeUndefined();
    expect(await outbox.record(first.deliveryId, 2, { statusCode: 204, error: null, delivered: true, backoffMs: 0, retryForMs: 60_000 })).toBe('delivered');
    const view = await outbox.ofJob(first.job.jobId);
    expect(view?.hasWebhook).toBe(true);
    expect(view?.deliveries).toMatchObject([
      {
        deliveryId: first.deliveryId,
        state: 'delivered',
        runStatus: 'completed',
        // The stale claim's answer is kept in the history; it did not settle the row.
        attempts: [
          { attempt: 1, statusCode: 503 },
          { attempt: 1, statusCode: 200 },
          { attempt: 2, statusCode: 204 },
        ],
      },
    ]);
  });

  it('gives up once the next attempt would fall past the retry window', async () => {
    const { ledger } = db;
    await ledger.pool.query("UPDATE webhook_deliveries SET state = 'gave_up'");
    const { jobId, token } = await running(ledger, URL_);
    await ledger.complete(jobId, token, {});
    const [c] = await outbox.claim(1, 60_000);
    if (!c) throw new Error('nothing claimed');
    expect(await outbox.record(c.deliveryId, 1, { statusCode: null, error: 'connection refused', delivered: false, backoffMs: 5_000, retryForMs: 1_000 })).toBe(
      'gave_up',
    );
    expect((await outbox.ofJob(jobId))?.deliveries[0]).toMatchObject({ state: 'gave_up', dueAt: null, attempts: [{ error: 'connection refused' }] });
  });

  it('stores the URL sealed, bound to its job, when encryption is on', async () => {
    const codec = AesGcmPayloadCodec.fromSpec(`k1:${randomBytes(32).toString('base64')}`);
    const sealed = new Ledger(db.ledger.pool, { crypto: codec });
    const { job } = await sealed.admit({ graph: 'echo', input: {}, webhook: URL_ });
    const stored = (await db.ledger.pool.query('SELECT webhook::text AS w FROM jobs WHERE job_id = $1', [job.jobId])).rows[0]?.w as string;
    expect(stored).not.toContain('hooks.example.com');
    expect(JSON.parse(stored)).toMatchObject({ enc: 'v1', kid: 'k1' });
    await db.ledger.pool.query("UPDATE webhook_deliveries SET state = 'gave_up'");
    await sealed.cancel(job.jobId);
    const [c] = await new WebhookOutbox(sealed).claim(1, 60_000);
    expect(c).toMatchObject({ url: URL_, runStatus: 'cancelled' });
  });
});
