// Per-job checks read back from the ledger: the fencing rules of a timeline (ARCHITECTURE.md, Invariants
// invariant 4) and the vacation tools' entries and bookings (invariants 3 and 5).
import { BOOKING_KINDS, type BookingKind, type Effect, type Job, type JobEvent, type Ledger } from '../packages/ledger/src/index';

const TERMINAL_EVENTS = new Set(['completed', 'failed', 'cancelled']);

/**
 * Every rule a timeline breaks if a stale write was applied: tokens fall, a claim skips a
 * token, a write lands after the job ended, or the job's token differs from its claims.
 * `enqueued` events are queue bookkeeping written by producers and reconcilers outside any
 * lease (record_enqueued.sql, mark_enqueued.sql), so they carry the token as last seen and are
 * not held to these rules.
 */
export function fencingProblems(job: Job, events: JobEvent[]): string[] {
  const problems: string[] = [];
  let last = 0;
  let claims = 0;
  let ended: JobEvent | undefined;
  for (const e of events) {
    if (e.type === 'enqueued') continue;
    const where = `job ${job.jobId} event ${e.eventId} (${e.type}, token ${e.fencingToken}, ${e.workerId ?? '-'})`;
    if (e.fencingToken < last) problems.push(`${where}: token fell from ${last}`);
    last = Math.max(last, e.fencingToken);
    // Any row after the end is a write that should have been refused.
    if (ended) problems.push(`${where}: written after ${ended.type} (event ${ended.eventId})`);
    if (e.type === 'claimed' && e.fencingToken !== ++claims) problems.push(`${where}: claim number ${claims} carries token ${e.fencingToken}`);
    if (TERMINAL_EVENTS.has(e.type)) ended = e;
  }
  if (job.fencingToken !== claims) problems.push(`job ${job.jobId}: token ${job.fencingToken} after ${claims} claims`);
  const completed = events.find((e) => e.type === 'completed');
  if (completed && completed.fencingToken !== job.fencingToken) {
    problems.push(`job ${job.jobId}: completed under token ${completed.fencingToken}, current token ${job.fencingToken}`);
  }
  return problems;
}

/**
 * Why a completed job's result shows its graph did not run to the end (undefined when it did):
 * echo counted every step, vacation's agent summarised the bookings, approval recorded an outcome.
 * Echo turns on a shared thread continue its counter, so there one entered step is the proof.
 */
export function unfinishedResult(job: Job, events: JobEvent[]): string | undefined {
  if (job.status !== 'completed') return undefined;
  const result = job.result as Record<string, unknown> | null;
  if (job.graph === 'echo' && job.threadId !== job.jobId) {
    return events.some((e) => e.type === 'node_entered') ? undefined : 'echo turn completed without entering a step';
  }
  if (job.graph === 'echo') {
    const steps = (job.input as { steps?: number } | null)?.steps ?? 2;
    return result?.done === steps ? undefined : `echo completed with done=${String(result?.done)} of ${steps} steps`;
  }
  if (job.graph === 'vacation')
    return JSON.stringify(result ?? null).includes('Your vacation is booked') ? undefined : 'vacation completed without the final summary';
  if (job.graph === 'approval') return typeof result?.outcome === 'string' ? undefined : 'approval completed without an outcome';
  return undefined;
}

export const TOOL_OF: Record<BookingKind, string> = { flight: 'book_flight', hotel: 'book_hotel', car: 'book_car' };

export interface ToolReport {
  /** Tool body entries per kind (node_entered events of all attempts). */
  entries: Record<BookingKind, number>;
  /** Provider bookings per kind (rows of example_bookings). */
  bookings: Record<BookingKind, number>;
  /** Entries by an attempt later than the one that committed the tool's effect (informational: no provider call follows). */
  reentriesAfterCommit: number;
  effects: Effect[];
}

export function toolEntries(events: JobEvent[]): Record<BookingKind, number> {
  const entries: Record<BookingKind, number> = { flight: 0, hotel: 0, car: 0 };
  for (const e of events) {
    if (e.type !== 'node_entered') continue;
    const kind = BOOKING_KINDS.find((k) => TOOL_OF[k] === e.detail.node);
    if (kind) entries[kind]++;
  }
  return entries;
}

/** Entries and bookings of one vacation job; `countBookings` is ExampleBookings.countBookings. */
export async function toolReport(
  ledger: Ledger,
  countBookings: (jobId: string) => Promise<Record<BookingKind, number>>,
  jobId: string,
  events: JobEvent[],
): Promise<ToolReport> {
  const [effects, bookings] = await Promise.all([ledger.effects(jobId), countBookings(jobId)]);
  let reentriesAfterCommit = 0;
  for (const kind of BOOKING_KINDS) {
    const committed = effects.find((f) => f.name === TOOL_OF[kind] && f.status === 'committed');
    if (!committed) continue;
    reentriesAfterCommit += events.filter(
      (e) => e.type === 'node_entered' && e.detail.node === TOOL_OF[kind] && e.fencingToken > committed.fencingToken,
    ).length;
  }
  return { entries: toolEntries(events), bookings, reentriesAfterCommit, effects };
}

/** Every job in the ledger, oldest first. */
export async function listAllJobs(ledger: Ledger): Promise<Job[]> {
  const jobs: Job[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await ledger.list({ limit: 500, cursor });
    jobs.push(...page.jobs);
    if (!page.nextCursor) return jobs.reverse();
    cursor = page.nextCursor;
  }
}
