// Operator verbs from every state (allowed ones move the job and leave an event; forbidden ones
// throw InvalidTransitionError and change nothing), tenant scoping, and keyset paging of list().
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDb, testDb } from '../../../test/support/db';
import { ALL_STATUSES, InvalidTransitionError, type Job, type JobStatus, LeaseLostError, type Ledger, NotFoundError } from '../src/index';
import { jobIn, snapshot } from './support/jobs';

let db: TestDb;
beforeAll(async () => {
  db = await testDb('operator');
});
afterAll(() => db.close());

interface Verb {
  from: readonly JobStatus[];
  to: JobStatus;
  event: string;
  run(ledger: Ledger, jobId: string): Promise<Job>;
}

const OPEN: JobStatus[] = ['accepted', 'starting', 'running', 'interrupted', 'recovery_required', 'manual_reconcile'];
const VERBS: Record<string, Verb> = {
  cancel: { from: OPEN, to: 'cancelled', event: 'cancelled', run: (l, id) => l.cancel(id, undefined, 'stop') },
  resume: { from: ['interrupted'], to: 'accepted', event: 'resume_requested', run: (l, id) => l.resume(id, { approved: true }) },
  replay: { from: ['manual_reconcile'], to: 'accepted', event: 'replay_requested', run: (l, id) => l.replay(id, undefined, 'checked') },
  'resolve completed': { from: ['manual_reconcile'], to: 'completed', event: 'resolved', run: (l, id) => l.resolve(id, 'completed', 'booked by hand') },
  'resolve failed': { from: ['manual_reconcile'], to: 'failed', event: 'resolved', run: (l, id) => l.resolve(id, 'failed', 'gave up') },
};

const cases = Object.entries(VERBS).flatMap(([name, verb]) => ALL_STATUSES.map((status) => [name, status, verb.from.includes(status)] as const));

describe('operator verbs', () => {
  it.each(cases)('%s from %s (allowed: %s)', async (name, status, allowed) => {
    const { ledger } = db;
    const verb = VERBS[name]!;
    const { job } = await jobIn(ledger, status);
    const before = await snapshot(ledger.pool, job.jobId);
    if (!allowed) {
      const err = await verb.run(ledger, job.jobId).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InvalidTransitionError);
      expect(err).toMatchObject({ code: 'INVALID_TRANSITION', jobId: job.jobId, status });
      expect(await snapshot(ledger.pool, job.jobId)).toEqual(before);
      return;
    }
    const after = await verb.run(ledger, job.jobId);
    expect(after).toMatchObject({ status: verb.to, leaseOwner: null, leaseExpiresAt: null, fencingToken: job.fencingToken });
    expect(await ledger.get(job.jobId)).toEqual(after);
    const events = await ledger.events(job.jobId);
    expect(events).toHaveLength(before.events.length + 1);
    expect(events.at(-1)).toMatchObject({ type: verb.event, fencingToken: job.fencingToken });
    if (verb.to === 'accepted') expect(after.attempt).toBe(0);
  });

  it('resume carries the value for Command({ resume }) and clears the interrupt', async () => {
    const { ledger } = db;
    const { job } = await jobIn(ledger, 'interrupted');
    expect(job.interrupt).toEqual({ question: 'ok?' });
    const resumed = await ledger.resume(job.jobId, { approved: true });
    expect(resumed).toMatchObject({ status: 'accepted', resumeValue: { value: { approved: true } }, interrupt: null });
    const claim = await ledger.claim(job.jobId, 'w2');
    expect(claim).toMatchObject({ ok: true, previousStatus: 'accepted', job: { resumeValue: { value: { approved: true } }, fencingToken: 2 } });
  });

  it('replay marks effects in doubt failed (rows kept) so the next attempt calls them again', async () => {
    const { ledger } = db;
    const { job } = await ledger.admit({ graph: 'echo', input: {} });
    const c = await ledger.claim(job.jobId, 'w1');
    if (!c.ok) throw new Error('claim refused');
    await ledger.recordEffectIntent(job.jobId, 1, 'done', 'book_flight', 'k-done');
    await ledger.settleEffect(job.jobId, 1, 'done', { result: { ref: 'F1' } });
    await ledger.recordEffectIntent(job.jobId, 1, 'doubt', 'book_car', 'k-doubt');
    await ledger.requireManual(job.jobId, 1, 'effect_in_doubt', { effectKey: 'doubt' });
    expect(await ledger.pendingEffects(job.jobId)).toEqual([{ effectKey: 'doubt', name: 'book_car' }]);
    await ledger.replay(job.jobId, undefined, 'provider has no booking');
    expect(await ledger.pendingEffects(job.jobId)).toEqual([]);
    const effects = Object.fromEntries((await ledger.effects(job.jobId)).map((e) => [e.effectKey, e]));
    expect(effects.done).toMatchObject({ status: 'committed', result: { ref: 'F1' } });
    expect(effects.doubt).toMatchObject({ status: 'failed', idempotencyKey: 'k-doubt', error: { reason: 'operator_replay', note: 'provider has no booking' } });
    const again = await ledger.claim(job.jobId, 'w2');
    if (!again.ok) throw new Error('claim after replay refused');
    expect(await ledger.recordEffectIntent(job.jobId, 2, 'doubt', 'book_car', 'k-doubt')).toMatchObject({ status: 'pending', attempts: 2 });
  });

  it('cancel stops a running attempt: its next write and heartbeat fail', async () => {
    const { ledger } = db;
    const { job, token } = await jobIn(ledger, 'running');
    await ledger.cancel(job.jobId, undefined, 'user');
    expect(await ledger.heartbeat('setup-worker', [{ jobId: job.jobId, token }])).toEqual([job.jobId]);
    await expect(ledger.complete(job.jobId, token, {})).rejects.toBeInstanceOf(LeaseLostError);
    expect(await ledger.claim(job.jobId, 'w2')).toMatchObject({ ok: false, reason: 'terminal', status: 'cancelled' });
  });

  it('a missing job is NotFoundError, not InvalidTransitionError', async () => {
    await expect(db.ledger.cancel('no-such-job')).rejects.toBeInstanceOf(NotFoundError);
    await expect(db.ledger.get('no-such-job')).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('tenant scoping', () => {
  it("another tenant cannot read or act on a tenant's job", async () => {
    const { ledger } = db;
    const { job } = await jobIn(ledger, 'manual_reconcile', { tenant: 'acme' });
    const before = await snapshot(ledger.pool, job.jobId);
    await expect(ledger.get(job.jobId, 'globex')).rejects.toBeInstanceOf(NotFoundError);
    await expect(ledger.cancel(job.jobId, 'globex')).rejects.toBeInstanceOf(NotFoundError);
    await expect(ledger.replay(job.jobId, 'globex')).rejects.toBeInstanceOf(NotFoundError);
    await expect(ledger.resolve(job.jobId, 'completed', 'x', 'globex')).rejects.toBeInstanceOf(NotFoundError);
    expect(await snapshot(ledger.pool, job.jobId)).toEqual(before);
    expect((await ledger.list({ tenant: 'globex' })).jobs.map((j) => j.jobId)).not.toContain(job.jobId);
    expect((await ledger.get(job.jobId, 'acme')).tenant).toBe('acme');
    expect((await ledger.resolve(job.jobId, 'failed', 'no', 'acme')).status).toBe('failed');
    expect(await ledger.countByStatus('acme')).toEqual({ failed: 1 });
  });
});

describe('list', () => {
  it('pages newest first with a cursor: no duplicates, no gaps, filters applied', async () => {
    const { ledger } = db;
    const tenant = 'pager';
    const made: Job[] = [];
    for (let i = 0; i < 23; i++) {
      const { job } = await ledger.admit({ tenant, graph: i % 3 ? 'echo' : 'vacation', input: { i }, threadId: `pg-${i % 4}` });
      made.push(job);
    }
    for (const j of made.slice(0, 5)) await ledger.cancel(j.jobId, tenant);

    async function all(filter: Parameters<Ledger['list']>[0]): Promise<string[]> {
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 50; page++) {
        const { jobs, nextCursor } = await ledger.list({ ...filter, tenant, limit: 4, cursor });
        expect(jobs.length).toBeLessThanOrEqual(4);
        seen.push(...jobs.map((j) => j.jobId));
        if (!nextCursor) return seen;
        cursor = nextCursor;
      }
      throw new Error('paging did not end');
    }
    const newestFirst = (pred: (j: Job, i: number) => boolean) =>
      made
        .filter(pred)
        .map((j) => j.jobId)
        .reverse();

    expect(await all({})).toEqual(newestFirst(() => true));
    expect(await all({ graph: 'vacation' })).toEqual(newestFirst((j) => j.graph === 'vacation'));
    expect(await all({ status: 'cancelled' })).toEqual(newestFirst((_, i) => i < 5));
    expect(await all({ status: 'accepted', threadId: 'pg-1' })).toEqual(newestFirst((j, i) => i >= 5 && j.threadId === 'pg-1'));
    // A page that ends exactly at the last job still reports no further cursor once empty.
    const exact = await ledger.list({ tenant, graph: 'vacation', limit: 8 });
    expect(exact.jobs).toHaveLength(8);
    expect((await ledger.list({ tenant, graph: 'vacation', limit: 8, cursor: exact.nextCursor ?? undefined })).jobs).toEqual([]);
  });
});
