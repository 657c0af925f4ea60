// Key rotation (ARCHITECTURE.md, Encryption at rest): values sealed with key kA, the keys changed
// to kB (current) + kA, and `runledger keys rotate` run as a real process while the test keeps
// writing. Afterwards every value opens with kB alone, unchanged, and no concurrent write is lost.
import { randomBytes } from 'node:crypto';
import { type Checkpoint, emptyCheckpoint, uuid6 } from '@langchain/langgraph-checkpoint';
import { AesGcmPayloadCodec, FencedPostgresSaver, KeyRotation, Ledger, RunStreamLog, SealingSerializer, sealContext } from '@runledger/ledger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDb, testDb, waitFor } from '../../../test/support/db';
import { cliEnv, errorLine, runCli } from './cli-process';

const key = (kid: string) => `${kid}:${randomBytes(32).toString('base64')}`;
const [A, B, C] = [key('kA'), key('kB'), key('kC')];
const codec = (spec: string) => AesGcmPayloadCodec.fromSpec(spec);
const cfg = (threadId: string) => ({ configurable: { thread_id: threadId, checkpoint_ns: '' } });

describe('runledger keys', { timeout: 300_000 }, () => {
  let db: TestDb;
  const ledgerWith = (spec: string) => new Ledger(db.ledger.pool, { crypto: codec(spec), coalesceAdmissions: false });
  const env = (spec: string) => cliEnv({ DATABASE_URL: db.url, DB_SCHEMA: db.schema, QUEUE_BACKEND: 'postgres', RUNLEDGER_ENCRYPTION_KEY: spec });
  /** Every sealed column of every table as stored text: what "nothing changed" compares. */
  const stored = async () =>
    (
      await db.ledger.pool.query(`SELECT (SELECT jsonb_agg(j ORDER BY job_id) FROM jobs j)::text || (SELECT jsonb_agg(e ORDER BY job_id, event_id) FROM job_events e)::text
        || (SELECT string_agg(encode(blob, 'base64'), ',' ORDER BY thread_id, channel) FROM checkpoint_blobs) AS all`)
    ).rows[0].all as string;
  /** What a reader sees of every job, its events, effects and stream, and of every thread's checkpoint. */
  async function plaintext(ledger: Ledger, jobIds: string[], threads: string[]) {
    const stream = new RunStreamLog(ledger.pool, { crypto: ledger.payloadCodec });
    const saver = new FencedPostgresSaver(ledger, { jobId: 'none', fencingToken: 0 }, { schema: db.schema });
    const jobs = [];
    for (const id of jobIds) {
      const { leaseOwner, leaseExpiresAt, fencingToken, updatedAt, ...job } = (await ledger.get(id)) as unknown as Record<string, unknown>;
      const events = (await ledger.events(id)).map((e) => ({ type: e.type, detail: e.detail }));
      jobs.push({ job, events, effects: await ledger.effects(id), stream: (await stream.read(id, 0)).map((s) => s.data) });
    }
    const checkpoints = [];
    for (const t of threads) {
      const tuple = await saver.getTuple(cfg(t));
      checkpoints.push([tuple?.checkpoint.channel_values, tuple?.pendingWrites]);
    }
    return { jobs, checkpoints };
  }

  const jobIds: string[] = [];
  const threads: string[] = [];
  let before: Awaited<ReturnType<typeof plaintext>>;

  beforeAll(async () => {
    db = await testDb('keys_rotate');
    const ledger = ledgerWith(A);
    const stream = new RunStreamLog(ledger.pool, { crypto: ledger.payloadCodec });
    for (let i = 0; i < 24; i++) {
      const { job } = await ledger.admit({ graph: 'echo', input: { secret: `in-${i}` }, idempotencyKey: `key-${i}`, metadata: { n: i } });
      jobIds.push(job.jobId);
      if (i % 3 === 2) continue; // some stay queued
      const claim = await ledger.claim(job.jobId, 'w1', 600_000);
      if (!claim.ok) throw new Error(claim.reason);
      const token = claim.job.fencingToken;
      await stream.append(job.jobId, token, [{ event: 'values', data: { chunk: i } }]);
      await ledger.recordEffectIntent(job.jobId, token, 'book', 'book', `book-${i}`);
      await ledger.settleEffect(job.jobId, token, 'book', { result: { confirmation: `C-${i}` } });
      const saver = new FencedPostgresSaver(ledger, { jobId: job.jobId, fencingToken: token }, { schema: db.schema });
      const cp: Checkpoint = { ...emptyCheckpoint(), id: uuid6(-1), channel_values: { messages: [`m-${i}`] }, channel_versions: { messages: 1 } };
      const config = await saver.put(cfg(`thread-${i}`), cp, { source: 'input', step: -1, parents: {} }, { messages: 1 });
      await saver.putWrites(config, [['messages', `w-${i}`]], 'task');
      threads.push(`thread-${i}`);
      if (i % 3 === 0) await ledger.complete(job.jobId, token, { answer: i });
      if (i === 1) await ledger.fail(job.jobId, token, { code: 'graph_error', message: 'secret failure' });
      if (i === 4) await ledger.park(job.jobId, token, [{ value: 'approve?' }]);
    }
    // One channel value in the format written before row binding: the re-seal binds it too.
    const [type, blob] = await new SealingSerializer(codec(A)).dumpsTyped(['unbound']);
    await db.ledger.pool.query("UPDATE checkpoint_blobs SET type = $1, blob = $2 WHERE thread_id = 'thread-0'", [type, Buffer.from(blob)]);
    before = await plaintext(ledgerWith(`${A},${B}`), jobIds, threads);
    expect(before.checkpoints[0]?.[0]).toEqual({ messages: ['unbound'] });
  });
  afterAll(() => db?.close());

  it('refuses bad input with one clear line and changes nothing', async () => {
    const snapshot = await stored();
    const unknown = await runCli(['keys', 'rotate', '--to', 'k9'], env(`${B},${A}`));
    expect([unknown.code, errorLine(unknown)]).toEqual([2, expect.stringMatching(/--to k9: no key with that id .*configured: kB, kA/)]);
    const notFirst = await runCli(['keys', 'rotate', '--to', 'kA'], env(`${B},${A}`));
    expect([notFirst.code, errorLine(notFirst)]).toEqual([2, expect.stringMatching(/the current key is kB\. Put kA first/)]);
    const malformed = await runCli(['keys', 'rotate'], env(`kB:c2hvcnQ=,${A}`));
    expect([malformed.code, errorLine(malformed)]).toEqual([2, expect.stringMatching(/RUNLEDGER_ENCRYPTION_KEY: key "kB" must be 32 bytes/)]);
    expect(malformed.stderr).not.toContain('c2hvcnQ');
    expect(await stored()).toBe(snapshot);
  });

  it('re-seals every value with the new key while writers keep writing, then status shows none left', async () => {
    const status = await runCli(['keys', 'status', '--json'], env(`${B},${A}`));
    expect(status.code, status.stderr).toBe(0);
    const counts = JSON.parse(status.stdout);
    expect(counts.currentKid).toBe('kB');
    expect(counts.remaining).toBeGreaterThan(100);
    expect(counts.tables.find((t: { table: string }) => t.table === 'checkpoint_blobs').stale).toMatchObject({ unbound: 1 });

    // A writer holds job X's row while the re-seal runs: the re-seal's swap of X's batch waits for
    // it, and X's result, re-written meanwhile with kB, is kept (compare-and-swap on the old value).
    const live = ledgerWith(`${B},${A}`);
    const x = jobIds[0] as string;
    const writer = await db.ledger.pool.connect();
    await writer.query('BEGIN');
    await writer.query('SELECT 1 FROM jobs WHERE job_id = $1 FOR UPDATE', [x]);
    const pid = (await writer.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    const rotate = runCli(['keys', 'rotate', '--batch', '5'], env(`${B},${A}`));
    await waitFor(
      'the re-seal to wait for the writer',
      async () => {
        const r = await db.ledger.pool.query('SELECT 1 FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid))', [pid]);
        return r.rowCount === 1;
      },
      120_000,
    );
    // More writers with the new keys, during the re-seal: complete the jobs still running, admit more.
    const written = new Map<string, unknown>([[x, { rewritten: true }]]);
    const writes = (async () => {
      for (const [i, id] of jobIds.entries()) {
        if (i % 3 !== 1 || i === 1) continue;
        const job = await live.get(id);
        if (job.status !== 'running' && job.status !== 'starting') continue;
        await live.complete(id, job.fencingToken, { late: i });
        written.set(id, { late: i });
      }
      for (let i = 0; i < 5; i++) {
        const { job } = await live.admit({ graph: 'echo', input: { during: i } });
        written.set(job.jobId, { during: i });
      }
    })();
    await writer.query('UPDATE jobs SET result = $2 WHERE job_id = $1', [x, JSON.stringify(codec(B).seal({ rewritten: true }, sealContext.jobResult(x)))]);
    await writer.query('COMMIT');
    writer.release();
    await writes;
    const run = await rotate;
    expect(run.code, run.stderr + run.stdout).toBe(0);
    expect(run.stdout).toMatch(/jobs +\[■+\] \d+\/\d+ rows · \d+ re-sealed/);
    expect(run.stdout).toMatch(/done: \d+ rows walked, \d+ value\(s\) re-sealed with kB, \d+ changed by a writer meanwhile \(kept as written\), 0 unreadable/);
    expect(run.stdout).not.toContain(' 0 changed by a writer');

    // Only kB now: nothing left under kA, content unchanged, the concurrent writes all there.
    const onlyB = ledgerWith(B);
    const left = await new KeyRotation(db.ledger.pool, codec(B)).status();
    expect(left.filter((t) => Object.keys(t.stale).length > 0)).toEqual([]);
    const after = await plaintext(onlyB, jobIds, threads);
    for (const [i, id] of jobIds.entries()) {
      const late = written.get(id);
      if (late) expect(after.jobs[i]?.job.result).toEqual(late);
      else expect(after.jobs[i]).toEqual(before.jobs[i]);
    }
    expect(after.checkpoints).toEqual(before.checkpoints);
    for (const [id, value] of written) if ('during' in (value as object)) expect((await onlyB.get(id)).input).toEqual(value);

    const again = await runCli(['keys', 'status'], env(B));
    expect(again.stdout).toContain('every sealed value uses kB.');
    expect(again.stdout).toMatch(/jobs +\d+ +- +\d+ +finished/);
  });

  it('resumes a stopped re-seal where it stopped', async () => {
    const stop = new AbortController();
    const rotation = new KeyRotation(db.ledger.pool, codec(`${C},${B}`));
    await rotation.run({ batchSize: 4, onBatch: () => stop.abort(), signal: stop.signal });
    const stopped = (await rotation.positions()).find((p) => p.table === 'jobs');
    expect(stopped).toMatchObject({ targetKid: 'kC', walked: 4, finishedAt: null });
    expect(stopped?.position).toHaveLength(1);
    const run = await runCli(['keys', 'rotate', '--to', 'kC'], env(`${C},${B}`));
    expect(run.code, run.stderr).toBe(0);
    const jobs = (await rotation.positions()).find((p) => p.table === 'jobs');
    const total = Number((await db.ledger.pool.query('SELECT count(*) AS n FROM jobs')).rows[0].n);
    expect(jobs).toMatchObject({ walked: total, position: null });
    expect(jobs?.finishedAt).not.toBeNull();
    expect(await plaintext(ledgerWith(C), jobIds, threads)).toEqual(await plaintext(ledgerWith(`${B},${C}`), jobIds, threads));
  });
});
