// Invariants of the ledger read back from what it stored: the job_events timeline and job rows
// sampled while commands ran. Each check returns the problems it found, so a failing property
// run names every broken rule at once.
import type pg from 'pg';
import { canTransition, isTerminal, type JobEvent, type JobStatus, LEASED_STATUSES, type Ledger } from '../../src/index';

/** A job row as sampled during a run. */
export interface Sample {
  jobId: string;
  threadId: string;
  status: JobStatus;
  token: number;
  row: string;
}

/** The status an event moves its job to; `hadCheckpoint` decides where a claim lands. Undefined: not a transition event. */
function statusAfter(e: JobEvent, hadCheckpoint: boolean): JobStatus | undefined {
  switch (e.type) {
    case 'accepted':
    case 'resume_requested':
    case 'replay_requested':
      return 'accepted';
    case 'claimed':
      return hadCheckpoint ? 'running' : 'starting';
    case 'checkpointed':
      return 'running';
    case 'completed':
    case 'failed':
    case 'interrupted':
    case 'recovery_required':
    case 'manual_reconcile':
    case 'cancelled':
      return e.type;
    case 'resolved':
      return e.detail.outcome as JobStatus;
    default:
      return undefined;
  }
}

/** The (status, token) path a job took according to its events, plus any rule the timeline breaks. */
export function replayTimeline(events: JobEvent[]): { path: Array<{ status: JobStatus; token: number; eventId: number }>; problems: string[] } {
  const problems: string[] = [];
  const path: Array<{ status: JobStatus; token: number; eventId: number }> = [];
  let status: JobStatus | undefined;
  let hadCheckpoint = false;
  let lastToken = 0;
  let claims = 0;
  for (const e of events) {
    const where = `event ${e.eventId} (${e.type}, token ${e.fencingToken})`;
    const to = statusAfter(e, hadCheckpoint);
    if (to === undefined) {
      problems.push(`${where}: unexpected event type`);
      continue;
    }
    if (e.fencingToken < lastToken) problems.push(`${where}: token fell from ${lastToken}`);
    lastToken = e.fencingToken;
    if (status === undefined) {
      if (e.type !== 'accepted') problems.push(`${where}: the timeline does not start with accepted`);
    } else {
      if (isTerminal(status)) problems.push(`${where}: written after the job was ${status}`);
      if (!canTransition(status, to)) problems.push(`${where}: ${status} → ${to} is not in TRANSITIONS`);
    }
    if (e.type === 'claimed') {
      claims++;
      if (e.fencingToken !== claims) problems.push(`${where}: claim number ${claims} carries token ${e.fencingToken}`);
      if (e.detail.from !== status) problems.push(`${where}: claim says it came from ${String(e.detail.from)}, timeline says ${status}`);
    }
    if (e.type === 'checkpointed') hadCheckpoint = true;
    status = to;
    path.push({ status: to, token: e.fencingToken, eventId: e.eventId });
  }
  return { path, problems };
}

/** True when `sub` appears in `seq` in order (not necessarily adjacent). */
function isSubsequence<T>(sub: T[], seq: T[]): boolean {
  let i = 0;
  for (const x of seq) if (i < sub.length && x === sub[i]) i++;
  return i === sub.length;
}

const dedupe = (xs: string[]) => xs.filter((x, i) => i === 0 || x !== xs[i - 1]);

/** A worker write the ledger accepted: it must have left its event, with the writer's token and name. */
export interface AcceptedWrite {
  jobId: string;
  token: number;
  workerId: string;
  event: string;
}

/** Checks every job of a run: timeline rules, samples explained by events, terminal rows frozen, one lease per thread. */
export async function checkRun(ledger: Ledger, jobIds: string[], samples: Sample[][], writes: AcceptedWrite[] = []): Promise<string[]> {
  const problems: string[] = [];
  for (const w of writes) {
    const events = await ledger.events(w.jobId);
    if (!events.some((e) => e.type === w.event && e.fencingToken === w.token && e.workerId === w.workerId)) {
      problems.push(`job ${w.jobId}: ${w.workerId}'s accepted ${w.event} with token ${w.token} left no such event`);
    }
  }
  const byThread = new Map<string, Array<JobEvent & { threadId: string }>>();
  for (const jobId of jobIds) {
    const job = await ledger.get(jobId);
    const events = await ledger.events(jobId);
    const timeline = replayTimeline(events);
    problems.push(...timeline.problems.map((p) => `job ${jobId}: ${p}`));
    const last = timeline.path.at(-1);
    if (last?.status !== job.status || last.token !== job.fencingToken) {
      problems.push(`job ${jobId}: row is ${job.status}/${job.fencingToken}, events end at ${last?.status}/${last?.token}`);
    }
    // Every state a sample caught must be one the events recorded, in the same order.
    const seen = samples.flatMap((s) => s.filter((x) => x.jobId === jobId));
    const sampled = dedupe(seen.map((s) => `${s.status}/${s.token}`));
    const recorded = dedupe(timeline.path.map((p) => `${p.status}/${p.token}`));
    if (!isSubsequence(sampled, recorded)) problems.push(`job ${jobId}: samples ${sampled.join(' ')} not explained by events ${recorded.join(' ')}`);
    for (let i = 1; i < seen.length; i++) {
      const [a, b] = [seen[i - 1]!, seen[i]!];
      if (b.token < a.token) problems.push(`job ${jobId}: sampled token fell ${a.token} → ${b.token}`);
      if (isTerminal(a.status) && a.row !== b.row) problems.push(`job ${jobId}: row changed after it was ${a.status}`);
    }
    const list = byThread.get(job.threadId) ?? [];
    list.push(...events.map((e) => ({ ...e, threadId: job.threadId })));
    byThread.set(job.threadId, list);
  }
  // Walk each thread's events in the order they were written: never two leased jobs at once.
  for (const [threadId, events] of byThread) {
    const current = new Map<string, JobEvent[]>();
    for (const e of events.sort((a, b) => a.eventId - b.eventId)) {
      current.set(e.jobId, [...(current.get(e.jobId) ?? []), e]);
      const leased = [...current.entries()].filter(([, evs]) => LEASED_STATUSES.includes(replayTimeline(evs).path.at(-1)?.status as JobStatus));
      if (leased.length > 1) problems.push(`thread ${threadId}: after event ${e.eventId} jobs ${leased.map(([id]) => id).join(', ')} are all leased`);
    }
  }
  for (const round of samples) {
    const leased = round.filter((s) => LEASED_STATUSES.includes(s.status));
    const threads = leased.map((s) => s.threadId);
    if (new Set(threads).size !== threads.length) problems.push(`a sample shows two leased jobs on one thread: ${JSON.stringify(leased)}`);
  }
  return problems;
}

/** One consistent read of every job row of a run (all threads starting with `prefix`). */
export async function sampleJobs(pool: pg.Pool, prefix: string): Promise<Sample[]> {
  const r = await pool.query("SELECT job_id, thread_id, status, fencing_token, row_to_json(j)::text AS row FROM jobs j WHERE thread_id LIKE $1 || '%'", [
    prefix,
  ]);
  return r.rows.map((x) => ({ jobId: x.job_id, threadId: x.thread_id, status: x.status, token: Number(x.fencing_token), row: x.row }));
}
