import type pg from 'pg';
import { run } from './sql';

/** One time bucket of the "jobs by status over time" chart: how many events of each type began in it. */
export interface EventBucket {
  bucket: Date;
  type: string;
  count: number;
}

/** One time bucket of the recovery-time chart (from `recovery_required` to the next `claimed`). */
export interface RecoveryBucket {
  bucket: Date;
  recoveries: number;
  /** Recoveries already followed by a claim; the times below are over these. */
  recovered: number;
  p50Ms: number | null;
  p95Ms: number | null;
  maxMs: number | null;
}

/** A time window cut into buckets of `bucketSeconds`, starting at `from`. */
export interface TimeWindow {
  from: Date;
  to: Date;
  bucketSeconds: number;
}

const num = (v: unknown): number | null => (v == null ? null : Number(v));

/**
 * Read-only queries for the operator view (dashboard, metrics), each served by an index so they
 * stay fast on a large ledger. Every method throws LedgerError DATABASE_UNAVAILABLE when
 * PostgreSQL cannot be reached.
 */
export class DashboardReads {
  constructor(private readonly pool: pg.Pool) {}

  private q(name: string, values: unknown[] = []): Promise<pg.QueryResult> {
    return run(this.pool, name, values);
  }

  /** How many checkpoints the tenant's thread has (root namespace) and the latest one's id. */
  async threadCheckpoints(tenant: string, threadId: string): Promise<{ count: number; latestId: string | null }> {
    const row = (await this.q('count_thread_checkpoints', [tenant, threadId])).rows[0];
    return { count: Number(row?.count ?? 0), latestId: (row?.latest_id as string | null) ?? null };
  }

  /** Events of `types` per bucket of the window; buckets without events are left out. */
  async eventBuckets(window: TimeWindow, types: readonly string[]): Promise<EventBucket[]> {
    const r = await this.q('count_events_by_bucket', [window.from, window.to, window.bucketSeconds, types]);
    return r.rows.map((x) => ({ bucket: x.bucket as Date, type: x.type as string, count: Number(x.count) }));
  }

  /** Recovery times per bucket of the window in which the job became `recovery_required`. */
  async recoveryBuckets(window: TimeWindow): Promise<RecoveryBucket[]> {
    const r = await this.q('recovery_times_by_bucket', [window.from, window.to, window.bucketSeconds]);
    return r.rows.map((x) => ({
      bucket: x.bucket as Date,
      recoveries: Number(x.recoveries),
      recovered: Number(x.recovered),
      p50Ms: num(x.p50_ms),
      p95Ms: num(x.p95_ms),
      maxMs: num(x.max_ms),
    }));
  }

  /** Effects per status over the whole ledger (statuses with none are absent). */
  async effectCounts(): Promise<Record<string, number>> {
    const rows = (await this.q('count_effects_by_status')).rows;
    return Object.fromEntries(rows.map((r) => [r.status, Number(r.count)]));
  }

  /** The operator-view columns of a job: its trace context and when retention pruned its history; undefined when no such job. */
  async jobAnnotations(jobId: string): Promise<{ traceContext: string | null; prunedAt: Date | null } | undefined> {
    const row = (await this.q('get_job_annotations', [jobId])).rows[0];
    return row ? { traceContext: (row.trace_context as string | null) ?? null, prunedAt: (row.pruned_at as Date | null) ?? null } : undefined;
  }
}
