// With RUNLEDGER_ENCRYPTION_KEY set, a cron's input and metadata are sealed at rest, bound to the
// cron (each firing's job seals them again under the job), read back in plaintext through the
// API, and counted and re-sealed by key rotation (`runledger keys status` / `rotate`).
import { randomBytes } from 'node:crypto';
import { AesGcmPayloadCodec, Crons, isSealedEnvelope, KeyRotation, Ledger, readStoredPayloads } from '@runledger/ledger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, type SecuredHarness, startSecuredApp, TWO_TENANTS } from './security-harness';

const key = (kid: string) => `${kid}:${randomBytes(32).toString('base64')}`;
const [A, B] = [key('kA'), key('kB')];
const SECRET = 'cron-secret-6c1e0f2a';

describe('crons under encryption at rest', () => {
  let h: SecuredHarness;
  let cronId: string;
  const raw = async () =>
    (await h.db.ledger.pool.query('SELECT input, metadata, (input::text || metadata::text) AS text FROM crons WHERE cron_id = $1', [cronId])).rows[0];

  beforeAll(async () => {
    h = await startSecuredApp('cron_encryption', { security: TWO_TENANTS, crypto: AesGcmPayloadCodec.fromSpec(A) });
    const res = await h.as(KEYS.acme, {
      method: 'POST',
      url: '/v1/crons',
      payload: { graph: 'approval', input: { request: SECRET }, metadata: { owner: SECRET }, schedule: '0 3 * * *' },
    });
    expect(res.statusCode).toBe(201);
    cronId = res.json().cronId;
  });
  afterAll(() => h?.close());

  it('stores input and metadata sealed and shows them in plaintext', async () => {
    const row = await raw();
    expect(isSealedEnvelope(row.input)).toBe(true);
    expect(isSealedEnvelope(row.metadata)).toBe(true);
    expect(row.text).not.toContain(SECRET);
    const view = (await h.as(KEYS.acme, { method: 'GET', url: `/v1/crons/${cronId}` })).json();
    expect([view.input, view.metadata]).toEqual([{ request: SECRET }, { owner: SECRET }]);
    const patched = await h.as(KEYS.acme, { method: 'PATCH', url: `/v1/crons/${cronId}`, payload: { input: { request: `${SECRET}-2` } } });
    expect(patched.json().input).toEqual({ request: `${SECRET}-2` });
    expect((await raw()).text).not.toContain(SECRET);
    // A sealed value copied to another cron does not open there: the seal is bound to its row.
    const other = await new Crons(h.ledger).create({ tenant: 'acme', graph: 'echo', input: {}, schedule: '0 4 * * *' });
    await h.db.ledger.pool.query('UPDATE crons SET input = (SELECT input FROM crons WHERE cron_id = $1) WHERE cron_id = $2', [cronId, other.cronId]);
    await expect(new Crons(h.ledger).get(other.cronId)).rejects.toThrow();
    await h.db.ledger.pool.query('DELETE FROM crons WHERE cron_id = $1', [other.cronId]);
  });

  it('fires with the opened input and metadata, sealed again in the job', async () => {
    await h.db.ledger.pool.query("UPDATE crons SET next_fire_at = now() - interval '1 second' WHERE cron_id = $1", [cronId]);
    const { admitted, failed } = await new Crons(h.ledger).fireDue({ graceMs: 60_000 });
    expect(failed).toEqual([]);
    expect(admitted).toHaveLength(1);
    const job = await h.ledger.get((admitted[0] as { jobId: string }).jobId);
    expect(job.input).toEqual({ request: `${SECRET}-2` });
    expect(job.metadata).toMatchObject({ owner: SECRET, cronId });
    const stored = await readStoredPayloads(h.db.ledger.pool, job.jobId);
    expect(isSealedEnvelope(stored?.input)).toBe(true);
  });

  it('is counted by keys status and re-sealed by keys rotate', async () => {
    const rotation = new KeyRotation(h.db.ledger.pool, AesGcmPayloadCodec.fromSpec(`${B},${A}`));
    const crons = async () => (await rotation.status()).find((t) => t.table === 'crons');
    expect(await crons()).toEqual({ table: 'crons', rows: 1, stale: { kA: 2 } });
    const report = await rotation.run();
    expect(report.unreadable).toBe(0);
    expect(await crons()).toEqual({ table: 'crons', rows: 1, stale: {} });
    const row = await raw();
    expect([row.input.kid, row.metadata.kid]).toEqual(['kB', 'kB']);
    const onlyB = new Crons(new Ledger(h.db.ledger.pool, { crypto: AesGcmPayloadCodec.fromSpec(B) }));
    const cron = await onlyB.get(cronId);
    expect([cron.input, cron.metadata]).toEqual([{ request: `${SECRET}-2` }, { owner: SECRET }]);
  });
});
