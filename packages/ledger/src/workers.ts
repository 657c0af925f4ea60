import type { Queryable } from './db';
import { run } from './sql';

/** A worker process as recorded by its heartbeats (`workers` table). */
export interface WorkerInfo {
  workerId: string;
  startedAt: Date;
  lastSeenAt: Date;
  /** Milliseconds since the last heartbeat, by the database clock. */
  seenMsAgo: number;
  info: Record<string, unknown>;
}

/**
 * Every worker that ever heartbeated, most recently seen first. A worker is alive when
 * `seenMsAgo` is within a few heartbeat intervals (heartbeats run at least once a second).
 * Throws LedgerError DATABASE_UNAVAILABLE when PostgreSQL cannot be reached.
 */
export async function listWorkers(db: Queryable): Promise<WorkerInfo[]> {
  const rows = (await run(db, 'list_workers')).rows;
  return rows.map((r) => ({
    workerId: r.worker_id as string,
    startedAt: r.started_at as Date,
    lastSeenAt: r.last_seen_at as Date,
    seenMsAgo: Number(r.seen_ms_ago),
    info: (r.info as Record<string, unknown>) ?? {},
  }));
}

/** What a worker announces (register_worker.sql): the pairs it serves and each graph's version, compatibility list and concurrency. */
export interface WorkerAnnouncement {
  /** graphVersionKey of every (graph, version) pair served, and `<graph>@*` (jobs with no version). */
  serves: string[];
  versions: Record<string, string>;
  resumes: Record<string, string[]>;
  concurrency: Record<string, number>;
}

/** The key a worker announces and a claim compares (graph_version_key in SQL): `<graph>@<version>`, `<graph>@*` for none. */
export function graphVersionKey(graph: string, version: string | null): string {
  return `${graph}@${version ?? '*'}`;
}

/** The sentence every reader shows for a job no live worker can run now (API `waitingFor`, CLI, dashboard). */
export function noLiveWorkerServes(graph: string, version: string | null): string {
  return `no live worker serves ${graphVersionKey(graph, version)}`;
}

/** A line for a graph and version whose jobs wait (Ledger.countWaitingForVersion): `no live worker serves vacation@1.0.0 (2 jobs wait)`. */
export function unservedLine(w: { graph: string; version: string | null; count: number }): string {
  return `${noLiveWorkerServes(w.graph, w.version)} (${w.count} ${w.count === 1 ? 'job waits' : 'jobs wait'})`;
}

/**
 * The graphVersionKeys live workers serve now (seen within 5 s, not stopped); empty when no live
 * worker announced anything. Throws LedgerError DATABASE_UNAVAILABLE when PostgreSQL cannot be reached.
 */
export async function listLiveServes(db: Queryable): Promise<Set<string>> {
  return new Set((await run(db, 'list_live_serves')).rows.map((r) => r.key as string));
}

/** Records a starting worker and what it serves, replacing an earlier process's announcement under the same id. */
export async function registerWorker(db: Queryable, workerId: string, info: WorkerAnnouncement): Promise<void> {
  await run(db, 'register_worker', [workerId, JSON.stringify(info)]);
}

/** Marks a worker as stopped, so what it served stops counting as served at once. Best effort callers ignore failures. */
export async function retireWorker(db: Queryable, workerId: string): Promise<void> {
  await run(db, 'retire_worker', [workerId]);
}
