// What the harness watches once the faults stop: how long leases held at the last fault's
// healing stay held (ARCHITECTURE.md, invariant 7), and when every job is terminal or parked.
import { type Job, type Ledger, TERMINAL_STATUSES } from '../packages/ledger/src/index';
import type { Submissions } from './clients';
import { readRetrying } from './faults-net';
import { listAllJobs } from './timeline';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function leased(ledger: Ledger): Promise<Job[]> {
  const [starting, running] = await Promise.all([ledger.list({ status: 'starting', limit: 500 }), ledger.list({ status: 'running', limit: 500 })]);
  return [...starting.jobs, ...running.jobs];
}

export interface LeaseWatch {
  /** The dead worker whose leases were watched. */
  owner: string;
  /** How many leases it held when it died. */
  watched: number;
  /** Longest time one of them stayed held after the kill (ms). */
  longestMs: number;
  jobId: string | null;
  /** Leases still held at the watch's timeout. */
  stillHeld: string[];
}

/**
 * Snapshots the leases `owner` (a worker just killed) holds and polls every 100 ms until each has
 * ended: its job left starting/running or was claimed again. Times count from `since` (the kill).
 */
export async function watchLeases(ledger: Ledger, owner: string, since: number, timeoutMs: number): Promise<LeaseWatch> {
  const start = since;
  const open = new Map((await readRetrying(() => leased(ledger))).filter((j) => j.leaseOwner === owner).map((j) => [j.jobId, j.fencingToken]));
  const watch: LeaseWatch = { owner, watched: open.size, longestMs: 0, jobId: null, stillHeld: [] };
  while (open.size > 0 && Date.now() - start < timeoutMs) {
    await sleep(100);
    const now = new Map((await leased(ledger).catch(() => undefined))?.map((j) => [j.jobId, j.fencingToken]) ?? open);
    for (const [jobId, token] of open) {
      if (now.get(jobId) === token) continue;
      open.delete(jobId);
      const held = Date.now() - start;
      if (held > watch.longestMs) Object.assign(watch, { longestMs: held, jobId });
    }
  }
  watch.stillHeld = [...open.keys()];
  if (watch.stillHeld.length > 0) Object.assign(watch, { longestMs: Date.now() - start, jobId: watch.stillHeld[0] });
  return watch;
}

/** True when the job needs nothing more from the system (a resumed approval still parked does). */
function settled(job: Job, resumeWanted: boolean): boolean {
  if (TERMINAL_STATUSES.includes(job.status) || job.status === 'manual_reconcile') return true;
  return job.status === 'interrupted' && !resumeWanted;
}

/** Polls until every accepted job is settled or `timeoutMs` passes; returns the ids still open. */
export async function waitSettled(ledger: Ledger, submissions: Submissions, timeoutMs: number, onPoll?: (open: number) => void): Promise<string[]> {
  const end = Date.now() + timeoutMs;
  let open: string[] = [];
  for (;;) {
    const accepted = submissions.accepted();
    const jobs = await listAllJobs(ledger).catch(() => undefined);
    if (jobs) {
      const byId = new Map(jobs.map((j) => [j.jobId, j]));
      open = [...accepted]
        .filter(([id, spec]) => {
          const job = byId.get(id);
          return !job || !settled(job, spec.resume);
        })
        .map(([id]) => id);
      onPoll?.(open.length);
      if (open.length === 0) return open;
    }
    if (Date.now() > end) return open;
    await sleep(500);
  }
}
