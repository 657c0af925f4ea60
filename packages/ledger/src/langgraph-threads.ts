import type pg from 'pg';
import { ThreadBusyError } from './errors';
import { json, LedgerCore } from './ledger-core';
import type { JobStatus } from './states';
import type { ThreadSaver } from './thread-saver';

/** A thread of the LangGraph Server API with its latest job, if any. */
export interface LangGraphThread {
  threadId: string;
  tenant: string;
  metadata: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
  /** The thread's newest job: its id, status and graph; null before the first run. */
  latestJob: { jobId: string; status: JobStatus; graph: string; updatedAt: Date } | null;
}

export interface ThreadSearch {
  /** Only this tenant's threads; undefined = every tenant (admin, open mode). */
  tenant?: string;
  ids?: string[];
  /** Threads whose metadata contains this object. */
  metadata?: Record<string, unknown>;
  /** Latest job in one of these statuses; 'none' = threads without a job. */
  jobStatuses?: ReadonlyArray<JobStatus | 'none'>;
  limit?: number;
  offset?: number;
  /** Default created_at, newest first. `status` is the LangGraph API's thread status of the latest job. */
  sortBy?: 'created_at' | 'updated_at' | 'thread_id' | 'status';
  sortOrder?: 'asc' | 'desc';
}

function toThread(r: Record<string, unknown>): LangGraphThread {
  return {
    threadId: r.thread_id as string,
    tenant: r.tenant as string,
    metadata: (r.metadata as Record<string, unknown>) ?? {},
    createdAt: r.created_at as Date,
    updatedAt: r.updated_at as Date,
    latestJob: r.job_id
      ? { jobId: r.job_id as string, status: r.job_status as JobStatus, graph: r.job_graph as string, updatedAt: r.job_updated_at as Date }
      : null,
  };
}

/**
 * Threads of the LangGraph Server API (`langgraph_threads`): created by a tenant before or with
 * its first run. Runs on them are ordinary jobs with that thread id.
 */
export class LangGraphThreads extends LedgerCore {
  /** Creates a tenant's thread; returns undefined when the tenant already has one of that id. */
  async create(threadId: string, tenant: string, metadata: Record<string, unknown> = {}): Promise<LangGraphThread | undefined> {
    const row = (await this.q('create_thread', [threadId, tenant, json(metadata)])).rows[0];
    return row ? toThread(row) : undefined;
  }

  /** Threads matching `s`, newest first. */
  async search(s: ThreadSearch = {}): Promise<LangGraphThread[]> {
    const limit = Math.min(Math.max(s.limit ?? 10, 1), 1000);
    const filter = [s.tenant ?? null, s.ids ?? null, s.metadata ? json(s.metadata) : null, s.jobStatuses ?? null];
    const values = [...filter, limit, Math.max(s.offset ?? 0, 0), s.sortBy ?? 'created_at', s.sortOrder ?? 'desc'];
    return (await this.q('search_threads', values)).rows.map(toThread);
  }

  /** How many threads match `s` (its tenant, metadata and job statuses). */
  async count(s: Pick<ThreadSearch, 'tenant' | 'metadata' | 'jobStatuses'> = {}): Promise<number> {
    const values = [s.tenant ?? null, s.metadata ? json(s.metadata) : null, s.jobStatuses ?? null];
    return (await this.q('count_threads', values)).rows[0].n as number;
  }

  /** One thread, undefined when it is missing or (with `tenant`) another tenant's. */
  async get(threadId: string, tenant?: string): Promise<LangGraphThread | undefined> {
    return (await this.search({ tenant, ids: [threadId], limit: 1 }))[0];
  }

  /**
   * Deletes a thread and its checkpoints (job rows stay). `deleted: false` when it is missing or
   * another tenant's, or when `openJob` names a job of it that has not finished (nothing is deleted).
   */
  async delete(threadId: string, tenant: string | undefined): Promise<{ deleted: boolean; openJob: string | null }> {
    const row = (await this.q('delete_thread', [threadId, tenant ?? null])).rows[0] as { deleted: boolean; open_job: string | null };
    return { deleted: row.deleted, openJob: row.open_job };
  }

  /** Merges metadata into a thread; false when it is missing or another tenant's. */
  async mergeMetadata(threadId: string, tenant: string | undefined, metadata: Record<string, unknown>): Promise<boolean> {
    return ((await this.q('update_thread_metadata', [threadId, tenant ?? null, json(metadata)])).rowCount ?? 0) === 1;
  }

  /**
   * Runs `write` (a state update through a LangGraph graph) with a checkpoint saver inside one
   * transaction that holds the tenant's thread: the admission lock (lock_thread.sql, as a
   * multitask "reject" admission takes it) and a share lock on its unfinished jobs, so no run can
   * be claimed or resumed until the checkpoint is committed. Throws ThreadBusyError, writing
   * nothing, when a job of the thread holds or awaits it (only a parked `interrupted` one may
   * stay: its resume then starts from the written state). Bumps the thread's `updated_at`.
   * `schema` is the checkpoint tables' (DB_SCHEMA).
   */
  async writeState<T>(threadId: string, tenant: string, schema: string, write: (saver: ThreadSaver) => Promise<T>): Promise<T> {
    return this.inTransaction(async (client) => {
      await this.q('lock_thread', [tenant, threadId], client);
      const open = (await this.q('hold_thread_jobs', [tenant, threadId], client)).rows as Array<{ job_id: string; status: JobStatus }>;
      const busy = open.find((j) => j.status !== 'interrupted');
      if (busy) throw new ThreadBusyError(threadId, busy.job_id);
      // Reads and writes of this saver go through the transaction's client: the update sees, and
      // commits on top of, the checkpoint this transaction holds still.
      // Loaded here, not at the top: the saver brings LangChain, which `@runledger/ledger/core`
      // (the CLI's entry) must not load at start-up.
      const { ThreadSaver } = await import('./thread-saver');
      const saver = new ThreadSaver(client as unknown as pg.Pool, { schema, codec: this.crypto });
      const out = await write(saver);
      await this.q('update_thread_metadata', [threadId, tenant, json({})], client);
      return out;
    });
  }
}
