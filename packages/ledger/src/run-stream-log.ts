import { sealContext } from './crypto';
import { fenced } from './errors';
import { LedgerCore } from './ledger-core';
import type { JobStatus } from './states';

/** One chunk of a run's stream as the SSE endpoints replay it. */
export interface StreamEvent {
  /** The chunk's number within its run: 0 for the first, then one more for each, in commit order (the SSE `id`). */
  id: number;
  attempt: number;
  event: string;
  data: unknown;
}

const sealContextOf = sealContext.streamData;

/**
 * The per-run stream log (`run_stream_events`): a worker appends the chunks of a streamed run
 * under its fencing token; the producer's SSE endpoints read them back after a Last-Event-ID.
 * Chunk data is sealed like job payloads when encryption is on.
 */
export class RunStreamLog extends LedgerCore {
  /**
   * Appends chunks in order for the lease holder `token`, numbered on from the run's last; returns their ids. Throws
   * LeaseLostError (and writes nothing) when the token is stale or the job left starting/running.
   */
  async append(jobId: string, token: number, chunks: ReadonlyArray<{ event: string; data: unknown }>): Promise<number[]> {
    if (chunks.length === 0) return [];
    const data = chunks.map((c) => JSON.stringify(this.seal(c.data ?? null, sealContextOf(jobId))));
    const r = await this.q('append_stream_events', [jobId, token, chunks.map((c) => c.event), data]);
    fenced(r.rowCount === chunks.length, jobId, token, 'stream chunks');
    return r.rows.map((x) => Number(x.seq));
  }

  /** Up to `limit` chunks of a run with an id above `afterId` (-1: from its first), oldest first. */
  async read(jobId: string, afterId: number, limit = 500): Promise<StreamEvent[]> {
    const rows = (await this.q('list_stream_events', [jobId, afterId, limit])).rows;
    return rows.map((r) => this.eventOf(jobId, r));
  }

  /**
   * A run's status and up to `limit` chunks after `afterId` (none when `limit` is 0), read in one
   * snapshot: when the status says the run ended, every chunk it wrote is there. Status null: no such job.
   */
  async tail(jobId: string, afterId: number, limit: number): Promise<{ status: JobStatus | null; events: StreamEvent[] }> {
    const rows = (await this.q('tail_run_stream', [jobId, afterId, limit])).rows;
    const events = rows.filter((r) => r.seq !== null).map((r) => this.eventOf(jobId, r));
    return { status: rows[0]?.status ?? null, events };
  }

  private eventOf(jobId: string, r: { seq: number; attempt: number; event: string; data: unknown }): StreamEvent {
    return { id: r.seq, attempt: r.attempt, event: r.event, data: this.crypto ? this.crypto.open(r.data, sealContextOf(jobId)) : r.data };
  }

  /**
   * Removes the logs of runs that ended more than `olderThanMs` ago, `batchSize` rows per
   * statement, at most `maxBatches` statements; returns the number of chunks removed.
   */
  async expire(olderThanMs: number, batchSize = 5_000, maxBatches = 100): Promise<number> {
    let removed = 0;
    for (let batch = 0; batch < maxBatches; batch++) {
      const n = (await this.q('expire_stream_events', [Math.round(olderThanMs), batchSize])).rowCount ?? 0;
      removed += n;
      if (n < batchSize) break;
    }
    return removed;
  }

  /** The newest chunk id of a run; -1 when it has none. */
  async lastId(jobId: string): Promise<number> {
    return Number((await this.q('last_stream_event_id', [jobId])).rows[0]?.last_id ?? -1);
  }
}
