import { randomBytes } from 'node:crypto';
import { AesGcmPayloadCodec, isFullySealed, isSealedEnvelope, Ledger, readStoredPayloads, requestHash } from '@runledger/ledger';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { waitFor } from '../../../test/support/db';
import { type Proc, spawnWorker, stackEnv } from '../../../test/support/stack';
import { KEYS, type SecuredHarness, startSecuredApp, TWO_TENANTS } from './security-harness';

// Encryption at rest: the producer and a real worker process seal input, result and effect
// results in their jsonb columns; the API reads them back in plaintext; an old key still opens
// old rows; Redis holds job ids and their labels only.

const key = () => randomBytes(32).toString('base64');
const K1 = `k1:${key()}`;
const K2 = `k2:${key()}`;
/** After rotation: k2 seals, k1 still opens. */
const ROTATED = `${K2},${K1}`;
const MARKER = `PAYLOAD-${randomBytes(6).toString('hex')}`;

const backend = inject('redisUrl') ? 'redis' : 'postgres';
let h: SecuredHarness;

beforeAll(async () => {
  h = await startSecuredApp('security_encryption', { security: TWO_TENANTS, crypto: AesGcmPayloadCodec.fromSpec(ROTATED), backend });
});
afterAll(() => h?.close());

const submit = (payload: object) => h.as(KEYS.acme, { method: 'POST', url: '/v1/jobs', payload });
const read = (jobId: string) => h.as(KEYS.acme, { url: `/v1/jobs/${jobId}` });

describe('encrypted columns', () => {
  it('stores the input as a sealed envelope that does not contain the plaintext, and the API decrypts it', async () => {
    const r = await submit({ graph: 'approval', input: { request: MARKER } });
    expect(r.statusCode).toBe(202);
    const jobId = r.json().jobId;
    const stored = await readStoredPayloads(h.db.ledger.pool, jobId);
    expect(isSealedEnvelope(stored?.input)).toBe(true);
    expect(stored?.input).toMatchObject({ enc: 'v1', kid: 'k2' });
    expect(Object.keys(stored?.input as object).sort()).toEqual(['data', 'enc', 'iv', 'kid', 'tag']);
    expect(JSON.stringify(stored)).not.toContain(MARKER);
    // A ledger without the key sees only the envelope.
    expect((await h.db.ledger.get(jobId)).input).toEqual(stored?.input);
    expect((await read(jobId)).json().input).toEqual({ request: MARKER });
  });

  it('keeps the idempotency fingerprint on the plaintext: same body → same job, other body → 409', async () => {
    const body = { graph: 'approval', input: { request: MARKER }, idempotencyKey: 'enc-key-1' };
    const first = await submit(body);
    const again = await submit(body);
    expect([first.statusCode, again.statusCode]).toEqual([202, 200]);
    expect(again.json().jobId).toBe(first.json().jobId);
    expect((await submit({ ...body, input: { request: `${MARKER}-other` } })).statusCode).toBe(409);
  });

  it('reads rows sealed with the old key (listed second) after rotation, and names a key that is missing', async () => {
    const before = new Ledger(h.db.ledger.pool, { crypto: AesGcmPayloadCodec.fromSpec(K1) });
    const { job } = await before.admit({ tenant: 'acme', graph: 'approval', input: { request: `${MARKER}-old` } });
    expect(await readStoredPayloads(h.db.ledger.pool, job.jobId)).toMatchObject({ input: { enc: 'v1', kid: 'k1' } });
    expect((await read(job.jobId)).json().input).toEqual({ request: `${MARKER}-old` });
    const withoutOldKey = new Ledger(h.db.ledger.pool, { crypto: AesGcmPayloadCodec.fromSpec(K2) });
    await expect(withoutOldKey.get(job.jobId)).rejects.toThrow(/sealed with key "k1"/);
  });
});

describe('columns that carry user data beside the payloads', () => {
  /** Every stored trace of a job: its row, its events and its effects, as PostgreSQL holds them. */
  async function storedText(jobId: string): Promise<string> {
    const r = await h.db.ledger.pool.query(
      `SELECT (SELECT row_to_json(j)::text FROM jobs j WHERE j.job_id = $1)
              || coalesce((SELECT string_agg(detail::text, ' ') FROM job_events WHERE job_id = $1), '')
              || coalesce((SELECT string_agg(row_to_json(e)::text, ' ') FROM effects e WHERE e.job_id = $1), '') AS text`,
      [jobId],
    );
    return r.rows[0].text as string;
  }
  /** Puts a job in manual_reconcile with a pending effect, as a worker whose provider call was in doubt would. */
  async function inDoubt(jobId: string): Promise<void> {
    const claim = await h.ledger.claim(jobId, 'w-enc');
    if (!claim.ok) throw new Error(`claim refused: ${claim.reason}`);
    await h.ledger.recordEffectIntent(jobId, claim.job.fencingToken, 'book', 'book', 'idem-1');
    await h.ledger.requireManual(jobId, claim.job.fencingToken, 'effect_in_doubt');
  }
  const act = (jobId: string, action: string, payload: object) => h.as(KEYS.acme, { method: 'POST', url: `/v1/jobs/${jobId}/${action}`, payload });

  it('seals metadata, the idempotency key and the notes of cancel, replay and resolve; the API shows them in plaintext', async () => {
    const tag = `${MARKER}-cols`;
    const body = { graph: 'approval', input: { request: 'plain' }, metadata: { customer: `${tag}-meta` }, idempotencyKey: `${tag}-idem` };
    const cancelled = (await submit(body)).json().jobId as string;
    expect((await act(cancelled, 'cancel', { note: `${tag}-cancel` })).statusCode).toBe(200);
    const replayed = (await submit({ graph: 'approval', input: { request: 'plain' } })).json().jobId as string;
    await inDoubt(replayed);
    expect((await act(replayed, 'replay', { note: `${tag}-replay` })).statusCode).toBe(200);
    const failed = (await submit({ graph: 'approval', input: { request: 'plain' } })).json().jobId as string;
    await inDoubt(failed);
    expect((await act(failed, 'resolve', { outcome: 'failed', note: `${tag}-resolve-failed` })).statusCode).toBe(200);
    const completed = (await submit({ graph: 'approval', input: { request: 'plain' } })).json().jobId as string;
    await inDoubt(completed);
    expect((await act(completed, 'resolve', { outcome: 'completed', note: `${tag}-resolve-done` })).statusCode).toBe(200);

    for (const jobId of [cancelled, replayed, failed, completed]) expect(await storedText(jobId)).not.toContain(tag);
    const job = (await read(cancelled)).json();
    expect([job.metadata, job.idempotencyKey]).toEqual([{ customer: `${tag}-meta` }, `${tag}-idem`]);
    const events = async (jobId: string) => JSON.stringify((await h.as(KEYS.acme, { url: `/v1/jobs/${jobId}/events` })).json());
    expect(await events(cancelled)).toContain(`${tag}-cancel`);
    expect(await events(replayed)).toContain(`${tag}-replay`);
    expect(JSON.stringify((await read(replayed)).json().effects)).toContain(`${tag}-replay`);
    expect(await events(failed)).toContain(`${tag}-resolve-failed`);
    expect((await read(failed)).json().error).toMatchObject({ code: 'resolved_failed', message: `${tag}-resolve-failed` });
    expect(await events(completed)).toContain(`${tag}-resolve-done`);
  });

  it('keys the request fingerprint: it is not the unkeyed SHA-256 of the request', async () => {
    const body = { graph: 'approval', input: { request: `${MARKER}-hash` }, idempotencyKey: 'enc-hash-1' };
    const jobId = (await submit(body)).json().jobId as string;
    const stored = (await h.db.ledger.pool.query('SELECT request_hash FROM jobs WHERE job_id = $1', [jobId])).rows[0].request_hash;
    expect(stored).not.toBe(requestHash({ graph: body.graph, input: body.input }));
    expect(stored).not.toMatch(/^[0-9a-f]{64}$/);
  });

  it('keeps idempotency across processes with the same keys, and across a rotation', async () => {
    const body = { graph: 'approval', input: { request: `${MARKER}-rot` }, idempotencyKey: 'enc-rotation-1' };
    const beforeRotation = new Ledger(h.db.ledger.pool, { crypto: AesGcmPayloadCodec.fromSpec(K1) });
    const { job } = await beforeRotation.admit({ ...body, tenant: 'acme' });
    // Another process with the same configuration.
    const sameKeys = new Ledger(h.db.ledger.pool, { crypto: AesGcmPayloadCodec.fromSpec(K1) });
    expect(await sameKeys.admit({ ...body, tenant: 'acme' })).toMatchObject({ created: false, job: { jobId: job.jobId } });
    // After rotation (k2 seals, k1 still listed), through the API.
    const again = await submit(body);
    expect([again.statusCode, again.json().jobId]).toEqual([200, job.jobId]);
    expect((await submit({ ...body, input: { request: `${MARKER}-rot-other` } })).statusCode).toBe(409);
    expect(
      (await h.db.ledger.list({ tenant: 'acme', limit: 500 })).jobs.filter((j) => j.jobId !== job.jobId && j.idempotencyKey === job.idempotencyKey),
    ).toEqual([]);
  });
});

describe('with a worker process holding the key', () => {
  let worker: Proc;
  beforeAll(async () => {
    worker = spawnWorker(stackEnv(h.queueConfig, h.db.url, h.db.schema, { RUNLEDGER_ENCRYPTION_KEY: ROTATED }), 'enc-worker');
  });
  afterAll(async () => {
    worker?.kill('SIGTERM');
    await worker?.exited;
  });

  it('decrypts the input it runs and seals the result and the effect results it writes', async () => {
    const jobId = (await submit({ graph: 'vacation', input: {} })).json().jobId;
    const done = await waitFor(
      'the vacation job to complete',
      async () => {
        const job = (await read(jobId)).json();
        return job.status === 'completed' || job.status === 'failed' ? job : undefined;
      },
      30_000,
    ).catch((err: Error) => {
      throw new Error(`${err.message}\nworker output:\n${worker.output()}`);
    });
    expect(done.status).toBe('completed');
    const stored = await readStoredPayloads(h.db.ledger.pool, jobId);
    expect(stored?.effects).toHaveLength(3);
    expect(isFullySealed(stored!)).toBe(true);
    expect(isSealedEnvelope(stored?.result)).toBe(true);
    // Through the API: plaintext effect results (the demo provider's bookings) and result.
    expect(done.effects.map((e: { status: string }) => e.status)).toEqual(['committed', 'committed', 'committed']);
    for (const e of done.effects) expect(isSealedEnvelope(e.result)).toBe(false);
    expect(JSON.stringify(done.effects)).toMatch(/flight|hotel|car/);
    expect(done.result).not.toBeNull();
    expect(isSealedEnvelope(done.result)).toBe(false);
  });

  it('completes an approval whose input only the key can read, and its result carries the plaintext', async () => {
    const jobId = (await submit({ graph: 'approval', input: { request: MARKER } })).json().jobId;
    await waitFor('the approval job to park', async () => (await read(jobId)).json().status === 'interrupted', 30_000);
    const resumed = await h.as(KEYS.acme, { method: 'POST', url: `/v1/jobs/${jobId}/resume`, payload: { resume: { approved: true } } });
    expect(resumed.statusCode).toBe(200);
    const done = await waitFor('the approval job to complete', async () => {
      const job = (await read(jobId)).json() as { status: string; result: unknown };
      return job.status === 'completed' ? job : undefined;
    });
    expect(done.result).toMatchObject({ outcome: `${MARKER}: approved` });
    const stored = await readStoredPayloads(h.db.ledger.pool, jobId);
    expect(JSON.stringify(stored)).not.toContain(MARKER);
    // The graph's state (checkpoint blobs and pending writes) is sealed too, and reads back through the API.
    expect(stored?.checkpoints.length).toBeGreaterThan(0);
    expect(stored?.checkpoints.every((c) => c.type.startsWith('sealed:'))).toBe(true);
    expect(stored && isFullySealed(stored)).toBe(true);
    const threadId = (await read(jobId)).json().threadId as string;
    const state = await h.as(KEYS.acme, { url: `/v1/threads/${threadId}/state` });
    expect(state.statusCode).toBe(200);
    expect(JSON.stringify(state.json())).toContain(MARKER);
  });

  it("leaves a LangGraph run's metadata out of its checkpoints' plain metadata (copied there only without a key)", async () => {
    const run = await h.as(KEYS.acme, {
      method: 'POST',
      url: '/runs',
      payload: { assistant_id: 'approval', input: { request: 'lg' }, metadata: { note: `${MARKER}-lg` } },
    });
    expect(run.statusCode).toBe(200);
    const runId = run.json().run_id as string;
    await waitFor('the run to park', async () => (await read(runId)).json().status === 'interrupted', 30_000);
    const rows = await h.db.ledger.pool.query(`SELECT metadata::text AS m FROM checkpoints WHERE metadata->>'runledger_job' = $1`, [runId]);
    expect(rows.rows.length).toBeGreaterThan(0);
    expect(rows.rows.map((r) => r.m).join(' ')).not.toContain(MARKER);
  });
});

describe.skipIf(backend !== 'redis')('Redis', () => {
  it('holds job ids and their labels only: no payload text in any key or value after a submission', async () => {
    const jobId = (await submit({ graph: 'approval', input: { request: `${MARKER}-redis` }, metadata: { note: MARKER } })).json().jobId;
    const redis = new Redis(inject('redisUrl') as string);
    try {
      const keys = await redis.keys(`${h.queueConfig.prefix}*`);
      expect(keys.length).toBeGreaterThan(0);
      let dump = '';
      const jobDatas: string[] = [];
      for (const k of keys) {
        const type = await redis.type(k);
        const value =
          type === 'string'
            ? await redis.get(k)
            : type === 'hash'
              ? await redis.hgetall(k)
              : type === 'list'
                ? await redis.lrange(k, '0', '-1')
                : type === 'set'
                  ? await redis.smembers(k)
                  : type === 'zset'
                    ? await redis.zrange(k, '0', '-1')
                    : type === 'stream'
                      ? await redis.xrange(k, '-', '+')
                      : `(${type})`;
        dump += `${k} ${JSON.stringify(value)}\n`;
        // BullMQ keeps each queue job in a hash whose `data` field is what the producer added.
        if (type === 'hash' && typeof (value as Record<string, string>).data === 'string') jobDatas.push((value as Record<string, string>).data as string);
      }
      expect(dump).toContain(jobId);
      expect(dump).not.toContain(MARKER);
      expect(jobDatas.length).toBeGreaterThan(0);
      const labels = ['jobId', 'graph', 'threadId', 'tenant', 'attempt', 'delivery'];
      for (const data of jobDatas) for (const k of Object.keys(JSON.parse(data))) expect(labels).toContain(k);
    } finally {
      redis.disconnect();
    }
  });
});
