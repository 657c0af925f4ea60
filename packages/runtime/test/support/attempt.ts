import { ExampleBookings, FencedPostgresSaver, type Job } from '@runledger/ledger';
import type { TestDb } from '../../../../test/support/db';
import { backdateLease, waitFor } from '../../../../test/support/db';
import { vacationGraph } from '../../src/graphs/vacation';
import type { RunContext, RunnableGraph } from '../../src/index';

/** One claimed attempt of a job, as a worker would hold it: context, abort switch, fenced graph. */
export interface Attempt {
  ctx: RunContext;
  controller: AbortController;
  saver: FencedPostgresSaver;
  graph: RunnableGraph;
  /** The config a worker passes to `graph.invoke`. */
  config: Record<string, unknown> & { configurable: { thread_id: string; runledger: RunContext } };
}

/** Claims `job` (with a lease of `ttlMs`) and builds the vacation graph on a saver fenced by the new token. */
export async function claimAttempt(db: TestDb, job: Job, ttlMs?: number, workerId = 'test-worker'): Promise<Attempt> {
  const claim = await db.ledger.claim(job.jobId, workerId, ttlMs);
  if (!claim.ok) throw new Error(`claim of ${job.jobId} refused: ${claim.reason}`);
  return attemptOf(db, claim.job);
}

/**
 * Ends the current lease by the database clock, as its time running out would (no sweep), then
 * claims again: the stale holder's token is now old, and its lease over either way.
 */
export async function reclaimAfterExpiry(db: TestDb, job: Job, workerId = 'next-worker'): Promise<Attempt> {
  await backdateLease(db.ledger.pool, job.jobId);
  const claimed = await waitFor(`lease on ${job.jobId} to expire`, async () => {
    const c = await db.ledger.claim(job.jobId, workerId);
    return c.ok ? c.job : undefined;
  });
  return attemptOf(db, claimed);
}

function attemptOf(db: TestDb, job: Job): Attempt {
  const controller = new AbortController();
  const ctx: RunContext = {
    jobId: job.jobId,
    threadId: job.threadId,
    fencingToken: job.fencingToken,
    attempt: job.attempt,
    ledger: db.ledger,
    signal: controller.signal,
  };
  const saver = new FencedPostgresSaver(db.ledger, { jobId: job.jobId, fencingToken: job.fencingToken }, { schema: db.schema });
  const config = { configurable: { thread_id: job.threadId, runledger: ctx }, durability: 'sync', signal: controller.signal };
  return { ctx, controller, saver, graph: vacationGraph.build(saver), config };
}

/** Admits a vacation job with `input`. */
export async function admitVacation(db: TestDb, input: Record<string, unknown>): Promise<Job> {
  return (await db.ledger.admit({ graph: 'vacation', input })).job;
}

/** How many times each node or tool body was entered (fenced `node_entered` events, all attempts). */
export async function entries(db: TestDb, jobId: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const e of await db.ledger.events(jobId)) {
    if (e.type !== 'node_entered') continue;
    const node = String(e.detail.node);
    counts[node] = (counts[node] ?? 0) + 1;
  }
  return counts;
}

/** Bookings per kind the demo provider holds for the job. */
export function bookingsOf(db: TestDb, jobId: string): Promise<Record<string, number>> {
  return new ExampleBookings(db.ledger.pool).countBookings(jobId);
}
