import { json, LedgerCore } from './ledger-core';
import type { JobStatus } from './states';

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
    const values = [s.tenant ?? null, s.ids ?? null, s.metadata ? json(s.metadata) : null, s.jobStatuses ?? null, limit, Math.max(s.offset ?? 0, 0)];
    return (await this.q('search_threads', values)).rows.map(toThread);
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
}
