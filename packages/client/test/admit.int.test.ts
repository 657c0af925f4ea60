import { randomBytes } from 'node:crypto';
import { AesGcmPayloadCodec, IdempotencyConflictError, isSealedEnvelope, Ledger, LedgerError, readStoredPayloads } from '@runledger/ledger';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDb, testDb } from '../../../test/support/db';
import { admit } from '../src/transaction';

// admit() inside a service's own transaction, on the service's own client: the job exists
// exactly when the service's transaction commits, in the ledger schema whatever the client's
// search_path, which is restored afterwards.

let db: TestDb;
let client: pg.Client;
beforeAll(async () => {
  db = await testDb('client_admit');
  // A service's connection: default search_path, not the ledger's.
  client = new pg.Client({ connectionString: db.url });
  await client.connect();
});
afterAll(async () => {
  await client?.end();
  await db?.close();
});

const searchPath = async () => (await client.query('SHOW search_path')).rows[0].search_path as string;
const jobCount = async () => (await db.ledger.list({ limit: 500 })).jobs.length;

describe('admit in the caller’s transaction', () => {
  it('leaves no job when the transaction rolls back', async () => {
    const before = await jobCount();
    await client.query('BEGIN');
    const admission = await admit(client, { graph: 'echo', input: {} }, { schema: db.schema });
    expect(admission).toMatchObject({ status: 'accepted', created: true });
    await client.query('ROLLBACK');
    expect(await jobCount()).toBe(before);
    await expect(db.ledger.get(admission.jobId)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('commits the job with the caller’s writes, undelivered for the reconciler, and restores search_path', async () => {
    const pathBefore = await searchPath();
    await client.query('BEGIN');
    const admission = await admit(client, { graph: 'echo', input: { steps: 1 }, threadId: 'order-42', idempotencyKey: 'order-42' }, { schema: db.schema });
    expect(await searchPath()).toBe(pathBefore);
    // Same key again in the same transaction: the same job.
    const again = await admit(client, { graph: 'echo', input: { steps: 1 }, threadId: 'order-42', idempotencyKey: 'order-42' }, { schema: db.schema });
    expect(again).toMatchObject({ jobId: admission.jobId, created: false });
    await client.query('COMMIT');
    expect(await searchPath()).toBe(pathBefore);
    const job = await db.ledger.get(admission.jobId);
    expect(job).toMatchObject({ status: 'accepted', threadId: 'order-42', deliveries: 1, deliveryId: job.jobId });
    expect((await db.ledger.events(job.jobId)).map((e) => e.type)).toEqual(['accepted']);
  });

  it('keeps the ledger’s typed errors, and the transaction usable after an idempotency conflict', async () => {
    await client.query('BEGIN');
    await admit(client, { graph: 'echo', input: { a: 1 }, idempotencyKey: 'k-conflict' }, { schema: db.schema });
    const err = await admit(client, { graph: 'echo', input: { a: 2 }, idempotencyKey: 'k-conflict' }, { schema: db.schema }).catch((e) => e);
    expect(err).toBeInstanceOf(IdempotencyConflictError);
    await client.query('COMMIT');
    expect((await db.ledger.list({ limit: 500 })).jobs.filter((j) => j.idempotencyKey === 'k-conflict')).toHaveLength(1);
  });

  it('refuses a client that is not inside a transaction, writing nothing', async () => {
    const before = await jobCount();
    await expect(admit(client, { graph: 'echo', input: {} }, { schema: db.schema })).rejects.toThrow('call BEGIN first');
    expect(await jobCount()).toBe(before);
  });

  it('refuses a schema that does not exist', async () => {
    await client.query('BEGIN');
    const err = await admit(client, { graph: 'echo', input: {} }, { schema: 'no_such_schema_here' }).catch((e) => e);
    await client.query('ROLLBACK');
    expect(err).toBeInstanceOf(LedgerError);
    expect(err.message).toContain('no_such_schema_here');
  });

  it('with the producer’s encryption key, seals the input at rest; a ledger with the key reads it back', async () => {
    const spec = `k1:${randomBytes(32).toString('base64')}`;
    await client.query('BEGIN');
    const admission = await admit(client, { graph: 'echo', input: { secret: 'SEALED-INPUT' } }, { schema: db.schema, encryptionKey: spec });
    await client.query('COMMIT');
    const stored = await readStoredPayloads(db.ledger.pool, admission.jobId);
    expect(isSealedEnvelope(stored?.input)).toBe(true);
    expect(JSON.stringify(stored)).not.toContain('SEALED-INPUT');
    const keyed = new Ledger(db.ledger.pool, { crypto: AesGcmPayloadCodec.fromSpec(spec) });
    expect((await keyed.get(admission.jobId)).input).toEqual({ secret: 'SEALED-INPUT' });
  });

  it('refuses a malformed encryption key before writing anything', async () => {
    const before = await jobCount();
    await client.query('BEGIN');
    const err = await admit(client, { graph: 'echo', input: {} }, { schema: db.schema, encryptionKey: 'not-a-key' }).catch((e) => e);
    await client.query('ROLLBACK');
    expect(err).toBeInstanceOf(Error);
    expect(err.message).toContain('kid:base64key');
    expect(await jobCount()).toBe(before);
  });
});
