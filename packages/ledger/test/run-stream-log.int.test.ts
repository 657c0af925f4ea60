// The per-run stream log: chunks appended in order under the attempt's fencing token; a stale
// attempt's append writes nothing and throws, so its chunks never follow the new attempt's.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type TestDb, testDb } from '../../../test/support/db';
import { LeaseLostError, RunStreamLog } from '../src/index';
import { backdateLease } from './support/jobs';

let db: TestDb;
let log: RunStreamLog;
beforeAll(async () => {
  db = await testDb('stream_log');
  log = new RunStreamLog(db.ledger.pool);
});
afterAll(() => db.close());

it('numbers chunks from 0 within the run; a later attempt skips one number; reads after an id; a stale token writes nothing', async () => {
  const { ledger } = db;
  const { job } = await ledger.admit({ graph: 'chat', input: {} });
  await expect(log.append(job.jobId, 0, [{ event: 'metadata', data: { attempt: 0 } }])).rejects.toThrow(LeaseLostError);
  const first = await ledger.claim(job.jobId, 'w1');
  if (!first.ok) throw new Error('claim refused');
  const ids = await log.append(job.jobId, 1, [
    { event: 'metadata', data: { attempt: 1 } },
    { event: 'messages', data: ['a'] },
    { event: 'messages', data: ['b'] },
  ]);
  expect(ids).toEqual([0, 1, 2]);
  expect(await log.lastId(job.jobId)).toBe(2);
  expect((await log.read(job.jobId, 0)).map((e) => e.data)).toEqual([['a'], ['b']]);
  // Another run's chunks do not take this run's numbers.
  const { job: other } = await ledger.admit({ graph: 'chat', input: {} });
  const otherClaim = await ledger.claim(other.jobId, 'w1');
  if (!otherClaim.ok) throw new Error('claim refused');
  expect(await log.lastId(other.jobId)).toBe(-1);
  expect(await log.append(other.jobId, otherClaim.job.fencingToken, [{ event: 'metadata', data: {} }])).toEqual([0]);
  expect(await log.append(job.jobId, 1, [{ event: 'messages', data: ['c'] }])).toEqual([3]);

  await backdateLease(ledger.pool, job.jobId);
  const second = await ledger.claim(job.jobId, 'w2');
  if (!second.ok) throw new Error('second claim refused');
  await expect(log.append(job.jobId, 1, [{ event: 'messages', data: ['stale'] }])).rejects.toThrow(LeaseLostError);
  const [restart] = await log.append(job.jobId, 2, [{ event: 'metadata', data: { attempt: 2 } }]);
  // 4 is left for the error event a producer may have ended attempt 1's streams with.
  expect(restart).toBe(5);
  const all = await log.read(job.jobId, -1);
  expect(all.map((e) => [e.id, e.attempt, e.event])).toEqual([
    [0, 1, 'metadata'],
    [1, 1, 'messages'],
    [2, 1, 'messages'],
    [3, 1, 'messages'],
    [5, 2, 'metadata'],
  ]);
  expect(await log.lastId(job.jobId)).toBe(restart);
  // A finished run takes no more chunks, even from its last holder.
  await ledger.complete(job.jobId, 2, {});
  await expect(log.append(job.jobId, 2, [{ event: 'values', data: {} }])).rejects.toThrow(LeaseLostError);
});

it('expires the logs of runs that ended before the cutoff, and only those', async () => {
  const { ledger } = db;
  const admitClaim = async () => {
    const { job } = await ledger.admit({ graph: 'chat', input: {} });
    const claim = await ledger.claim(job.jobId, 'w');
    if (!claim.ok) throw new Error('claim refused');
    await log.append(job.jobId, claim.job.fencingToken, [
      { event: 'metadata', data: {} },
      { event: 'values', data: {} },
    ]);
    return claim.job;
  };
  const old = await admitClaim();
  await ledger.complete(old.jobId, old.fencingToken, {});
  await ledger.pool.query("UPDATE jobs SET completed_at = now() - interval '2 hours' WHERE job_id = $1", [old.jobId]);
  const recent = await admitClaim();
  await ledger.complete(recent.jobId, recent.fencingToken, {});
  const open = await admitClaim();
  await ledger.pool.query("UPDATE jobs SET updated_at = now() - interval '2 hours' WHERE job_id = $1", [open.jobId]);

  expect(await log.expire(3_600_000, 1)).toBe(2);
  expect((await log.read(old.jobId, -1)).length).toBe(0);
  expect((await log.read(recent.jobId, -1)).length).toBe(2);
  expect((await log.read(open.jobId, -1)).length).toBe(2);
  expect(await log.expire(3_600_000)).toBe(0);
});

it("numbers the chunks a previous release's worker inserts without a seq, during a rolling deploy", async () => {
  const { ledger } = db;
  const { job } = await ledger.admit({ graph: 'chat', input: {} });
  const claim = await ledger.claim(job.jobId, 'w1');
  if (!claim.ok) throw new Error('claim refused');
  expect(await log.append(job.jobId, claim.job.fencingToken, [{ event: 'metadata', data: {} }])).toEqual([0]);
  // The previous release's append statement: no seq column.
  const old = await ledger.pool.query(
    `INSERT INTO run_stream_events (job_id, attempt, fencing_token, event, data)
     SELECT $1, 1, $2, chunk.event, chunk.data FROM unnest($3::text[], $4::jsonb[]) WITH ORDINALITY AS chunk(event, data, n) ORDER BY chunk.n
     RETURNING seq`,
    [job.jobId, claim.job.fencingToken, ['messages', 'messages'], [JSON.stringify(['a']), JSON.stringify(['b'])]],
  );
  expect(old.rows.map((r) => r.seq)).toEqual([1, 2]);
  expect(await log.append(job.jobId, claim.job.fencingToken, [{ event: 'values', data: {} }])).toEqual([3]);
  expect((await log.read(job.jobId, -1)).map((e) => [e.id, e.event])).toEqual([
    [0, 'metadata'],
    [1, 'messages'],
    [2, 'messages'],
    [3, 'values'],
  ]);
});
