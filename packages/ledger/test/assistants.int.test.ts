// Stored assistants in the ledger: versions added one at a time under concurrent changes, config,
// context and description sealed at rest and bound to their version, and re-sealed by a key rotation.
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDb, testDb } from '../../../test/support/db';
import { AesGcmPayloadCodec, isSealedEnvelope, KeyRotation, StoredAssistants } from '../src/index';

const K1 = `k1:${randomBytes(32).toString('base64')}`;
const K2 = `k2:${randomBytes(32).toString('base64')}`;
const fields = {
  graphId: 'chat',
  name: 'support bot',
  description: 'secret prompt notes',
  config: { configurable: { model: 'gpt-secret' } },
  context: { user: 'ann' },
  metadata: { team: 'a' },
};

let db: TestDb;
beforeAll(async () => {
  db = await testDb('assistants');
});
afterAll(() => db.close());

describe('stored assistants', () => {
  it('concurrent changes each get their own version, and the current one is the last written', async () => {
    const store = new StoredAssistants(db.ledger.pool);
    const id = randomUUID();
    await store.create('acme', id, fields);
    const done = await Promise.all(Array.from({ length: 8 }, (_, i) => store.update('acme', id, { metadata: { [`k${i}`]: i } })));
    expect(done.map((a) => a?.version).sort((a, b) => (a ?? 0) - (b ?? 0))).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
    const now = await store.get('acme', id);
    expect(now?.version).toBe(9);
    // Each change merged into the one before it: the last version has every key.
    expect(Object.keys(now?.metadata ?? {}).sort()).toEqual(['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7', 'team']);
    expect((await store.versions('acme', id, { limit: 100 })).map((v) => v.version)).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1]);
  });

  it('seals config, context and description bound to tenant, assistant and version; a key rotation re-seals them', async () => {
    const store = new StoredAssistants(db.ledger.pool, { crypto: AesGcmPayloadCodec.fromSpec(K1) });
    const id = randomUUID();
    await store.create('acme', id, fields);
    await store.update('acme', id, { name: 'renamed' });
    const raw = await db.ledger.pool.query(
      'SELECT version, description, config, context, name, metadata FROM assistant_versions WHERE assistant_id = $1 ORDER BY version',
      [id],
    );
    const text = JSON.stringify(raw.rows);
    for (const secret of ['secret prompt', 'gpt-secret', 'ann']) expect(text).not.toContain(secret);
    for (const r of raw.rows) for (const c of ['description', 'config', 'context']) expect(isSealedEnvelope(r[c])).toBe(true);
    expect(raw.rows.map((r) => r.name)).toEqual(['support bot', 'renamed']);
    expect((await store.get('acme', id))?.config).toEqual(fields.config);

    // Version 1's config copied onto version 2 does not open there.
    await db.ledger.pool.query(
      `UPDATE assistant_versions SET config = (SELECT config FROM assistant_versions WHERE assistant_id = $1 AND version = 1) WHERE assistant_id = $1 AND version = 2`,
      [id],
    );
    await expect(store.get('acme', id)).rejects.toThrow(/altered or moved from another row/);
    await db.ledger.pool.query('UPDATE assistant_versions SET config = $2 WHERE assistant_id = $1 AND version = 2', [id, raw.rows[1]?.config]);

    const rotation = new KeyRotation(db.ledger.pool, AesGcmPayloadCodec.fromSpec(`${K2},${K1}`));
    const before = (await rotation.status()).find((t) => t.table === 'assistant_versions');
    expect(before?.stale.k1).toBeGreaterThanOrEqual(6);
    await rotation.run();
    expect((await rotation.status()).find((t) => t.table === 'assistant_versions')?.stale).toEqual({});
    const afterRotation = new StoredAssistants(db.ledger.pool, { crypto: AesGcmPayloadCodec.fromSpec(K2) });
    expect(await afterRotation.get('acme', id)).toMatchObject({ version: 2, name: 'renamed', description: fields.description, context: fields.context });
  });
});
