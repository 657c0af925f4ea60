// With encryption at rest, the idempotency key and the request fingerprint are stored as keyed
// digests (HMAC, per configured key) and metadata sealed: idempotency (ARCHITECTURE.md, invariant 6) must
// hold across processes, key rotations and the switch from no encryption to encryption.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDb, testDb } from '../../../test/support/db';
import { AesGcmPayloadCodec, IdempotencyConflictError, isSealedEnvelope, Ledger, requestHash } from '../src/index';

const K1 = `k1:${randomBytes(32).toString('base64')}`;
const K2 = `k2:${randomBytes(32).toString('base64')}`;

let db: TestDb;
const keyed = (spec: string, coalesce = true) =>
  new Ledger(db.ledger.pool, { crypto: AesGcmPayloadCodec.fromSpec(spec), coalesceAdmissions: coalesce ? undefined : false });
const stored = async (jobId: string) => (await db.ledger.pool.query('SELECT * FROM jobs WHERE job_id = $1', [jobId])).rows[0];
const req = (key: string, input: unknown = { steps: 1 }) => ({ graph: 'echo', input, idempotencyKey: key, metadata: { customer: 'c-1' } });

beforeAll(async () => {
  db = await testDb('keyed_columns');
});
afterAll(() => db.close());

describe('keyed columns', () => {
  it('stores plaintext key, metadata and the unkeyed SHA-256 fingerprint when encryption is off (as before)', async () => {
    const { job } = await db.ledger.admit(req('plain-1'));
    const row = await stored(job.jobId);
    expect([row.idempotency_key, row.metadata, row.idempotency_key_sealed]).toEqual(['plain-1', { customer: 'c-1' }, null]);
    expect(row.request_hash).toBe(requestHash({ graph: 'echo', input: { steps: 1 }, metadata: { customer: 'c-1' } }));
  });

  it('stores no fingerprint for an admission without an idempotency key (nothing would read it)', async () => {
    const { job } = await db.ledger.admit({ graph: 'echo', input: { steps: 1 } });
    expect((await stored(job.jobId)).request_hash).toBeNull();
    const sealed = await keyed(K1).admit({ graph: 'echo', input: { steps: 1 } });
    expect((await stored(sealed.job.jobId)).request_hash).toBeNull();
  });

  it('stores digests and sealed values with a key, and reads them back in plaintext', async () => {
    const ledger = keyed(K1);
    const { job } = await ledger.admit(req('sealed-1'));
    const row = await stored(job.jobId);
    expect(row.idempotency_key).toMatch(/^k1:[0-9a-f]{64}$/);
    expect(row.request_hash).toMatch(/^k1:[0-9a-f]{64}$/);
    expect(isSealedEnvelope(row.metadata) && isSealedEnvelope(row.idempotency_key_sealed)).toBe(true);
    expect(await ledger.get(job.jobId)).toMatchObject({ idempotencyKey: 'sealed-1', metadata: { customer: 'c-1' } });
  });

  it.each([
    ['plaintext rows, then encryption turned on', undefined, K1],
    ['rows of k1, then k2 first (rotation)', K1, `${K2},${K1}`],
  ])('answers a retry across %s with the same job, and another body with a conflict', async (_name, before, after) => {
    const key = `across-${randomBytes(3).toString('hex')}`;
    const first = (await (before ? keyed(before) : db.ledger).admit(req(key))).job;
    for (const coalesce of [true, false]) {
      const ledger = keyed(after, coalesce);
      // Concurrent retries share coalesced statements: every one must find the earlier row.
      const again = await Promise.all(Array.from({ length: 10 }, () => ledger.admit(req(key))));
      expect(again.map((r) => [r.created, r.job.jobId])).toEqual(again.map(() => [false, first.jobId]));
      await expect(ledger.admit(req(key, { steps: 2 }))).rejects.toBeInstanceOf(IdempotencyConflictError);
    }
    expect((await keyed(after).list({ limit: 500 })).jobs.filter((j) => j.idempotencyKey === key)).toHaveLength(1);
  });

  it('gives every process with the same keys the same digests', async () => {
    const { job } = await keyed(K1).admit(req('two-processes'));
    expect(await keyed(K1).admit(req('two-processes'))).toMatchObject({ created: false, job: { jobId: job.jobId } });
  });
});

describe('error messages', () => {
  const SECRET = `card 4111-${randomBytes(4).toString('hex')}`;
  const storedText = async (jobId: string) =>
    (
      await db.ledger.pool.query(
        `SELECT (SELECT row_to_json(j)::text FROM jobs j WHERE job_id = $1) || (SELECT string_agg(detail::text, ' ') FROM job_events WHERE job_id = $1) AS text`,
        [jobId],
      )
    ).rows[0].text as string;
  /** A job claimed by a worker, and its token. */
  async function claimed(ledger: Ledger) {
    const { job } = await ledger.admit({ graph: 'echo', input: {} });
    const claim = await ledger.claim(job.jobId, 'w-errors', 60_000);
    if (!claim.ok) throw new Error(`claim refused: ${claim.reason}`);
    return { jobId: job.jobId, token: claim.job.fencingToken };
  }

  it('seals a graph error message in the job row and its events, retried or final, and reads it back', async () => {
    const ledger = keyed(K1);
    const retried = await claimed(ledger);
    await ledger.retryLater(retried.jobId, retried.token, { name: 'Error', code: 'graph_error', message: SECRET }, 60_000);
    const failed = await claimed(ledger);
    await ledger.fail(failed.jobId, failed.token, { name: 'Error', code: 'graph_error', message: SECRET });
    for (const { jobId } of [retried, failed]) {
      expect(await storedText(jobId)).not.toContain(SECRET);
      expect((await stored(jobId)).error.code).toBe('graph_error');
      expect((await ledger.get(jobId)).error).toMatchObject({ code: 'graph_error', message: SECRET });
    }
    const events = await ledger.events(retried.jobId);
    expect(events.find((e) => e.type === 'recovery_required')?.detail).toMatchObject({ error: { message: SECRET } });
    expect((await ledger.events(failed.jobId)).find((e) => e.type === 'failed')?.detail).toMatchObject({ message: SECRET });
  });

  it('refuses a sealed message copied to another job', async () => {
    const ledger = keyed(K1);
    const a = await claimed(ledger);
    await ledger.fail(a.jobId, a.token, { code: 'graph_error', message: SECRET });
    const { job: b } = await ledger.admit({ graph: 'echo', input: {} });
    await db.ledger.pool.query('UPDATE jobs SET error = (SELECT error FROM jobs WHERE job_id = $1) WHERE job_id = $2', [a.jobId, b.jobId]);
    await expect(ledger.get(b.jobId)).rejects.toThrow(/altered or moved from another row/);
  });
});
