import type { CronOutcome, MissedPolicy } from './cron-schedule';
import type { RateTake } from './rate-buckets';

/** A cron definition as stored (`crons` row). */
export interface Cron {
  cronId: string;
  tenant: string;
  graph: string;
  schedule: string;
  timezone: string;
  input: unknown;
  /** null: each firing starts a new thread; else each firing is a turn of this thread. */
  threadId: string | null;
  metadata: Record<string, unknown>;
  missed: MissedPolicy;
  enabled: boolean;
  nextFireAt: Date;
  /** The LangGraph API assistant each firing runs (a cron of /runs/crons); null for a /v1 cron. */
  assistantId: string | null;
  /** No firing after this time; null: never ends. */
  endTime: Date | null;
  createdAt: Date;
  updatedAt: Date;
  /** The latest handled scheduled time, what became of it and why it failed (list only). */
  lastScheduledAt?: Date | null;
  lastOutcome?: CronOutcome | null;
  lastReason?: string | null;
}

export interface CronFiring {
  cronId: string;
  scheduledAt: Date;
  outcome: CronOutcome;
  jobId: string | null;
  /** Why a `failed` time was not admitted (the admission's refusal); null otherwise. */
  reason: string | null;
  recordedAt: Date;
}

export interface NewCron {
  tenant?: string;
  graph: string;
  schedule: string;
  /** IANA time zone the schedule is read in. Default UTC. */
  timezone?: string;
  input: unknown;
  threadId?: string | null;
  metadata?: Record<string, unknown>;
  missed?: MissedPolicy;
  enabled?: boolean;
  /**
   * A LangGraph API cron's assistant. Such a cron's firings without a thread each get a new
   * LangGraph API thread (`langgraph_threads`), so they are runs the API can read.
   */
  assistantId?: string | null;
  endTime?: Date | null;
}

/** `endTime: null` clears it; `metadata` replaces the stored metadata. */
export type CronPatch = Partial<Pick<NewCron, 'schedule' | 'timezone' | 'input' | 'missed' | 'enabled' | 'metadata' | 'endTime'>>;

/** Filters and order of `Crons.search` (the LangGraph API's cron search). */
export interface CronSearch {
  tenant?: string;
  assistantId?: string;
  threadId?: string;
  enabled?: boolean;
  /** Only crons with an assistant (the LangGraph API's). Default false. */
  assistantsOnly?: boolean;
  limit?: number;
  offset?: number;
  sortBy?: 'cron_id' | 'assistant_id' | 'thread_id' | 'created_at' | 'updated_at' | 'next_run_date';
  sortOrder?: 'asc' | 'desc';
}

export interface CronsOptions {
  /** Most crons one tenant may have; `create` beyond it throws LIMIT_REACHED. Default no cap (operator tools). */
  maxPerTenant?: number;
}

export interface FireOptions {
  /** How late a time may be handled and still count as on time. */
  graceMs: number;
  /** Most crons per pass. Default 50. */
  limit?: number;
  /** Charges one admission to the cron's tenant (its rate bucket); a refused take records the time as `failed`. Default none. */
  charge?: (tenant: string) => Promise<RateTake>;
}

/** Longest `reason` stored for a failed time. */
export const MAX_REASON_CHARS = 500;

export function toCron(r: Record<string, unknown>): Cron {
  return {
    cronId: r.cron_id as string,
    tenant: r.tenant as string,
    graph: r.graph as string,
    schedule: r.schedule as string,
    timezone: r.timezone as string,
    input: r.input ?? null,
    threadId: (r.thread_id as string | null) ?? null,
    metadata: (r.metadata as Record<string, unknown>) ?? {},
    missed: r.missed as MissedPolicy,
    enabled: r.enabled as boolean,
    nextFireAt: r.next_fire_at as Date,
    assistantId: (r.assistant_id as string | null) ?? null,
    endTime: (r.end_time as Date | null) ?? null,
    createdAt: r.created_at as Date,
    updatedAt: r.updated_at as Date,
    ...('last_outcome' in r
      ? {
          lastScheduledAt: (r.last_scheduled_at as Date | null) ?? null,
          lastOutcome: (r.last_outcome as CronOutcome | null) ?? null,
          lastReason: (r.last_reason as string | null) ?? null,
        }
      : {}),
  };
}
