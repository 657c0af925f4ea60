import { LedgerCore } from './ledger-core';

/** Limits of one graph: at most `maxPerInterval` claims per `intervalMs` (default 1000), at most `maxConcurrent` leased runs. */
export interface GraphLimitSpec {
  maxPerInterval?: number | null;
  intervalMs?: number | null;
  maxConcurrent?: number | null;
}

/** A graph's limits as stored, with what they hold back now. */
export interface GraphLimit {
  graph: string;
  maxPerInterval: number | null;
  intervalMs: number | null;
  maxConcurrent: number | null;
  /** Leased runs of the graph now. */
  running: number;
  /** Waiting jobs of the graph (accepted or recovery_required) held back by the limit in their current attempt. */
  heldBack: number;
}

/** Per-graph limits, shared by every worker: Ledger.claimLimited holds a graph's claims to them. */
export class GraphLimits extends LedgerCore {
  /** Sets a graph's limits, shared by every worker (claimLimited): runs per interval and/or leased runs at once. */
  async set(graph: string, limit: GraphLimitSpec): Promise<void> {
    const perInterval = limit.maxPerInterval ?? null;
    await this.q('upsert_graph_limit', [graph, perInterval, perInterval === null ? null : (limit.intervalMs ?? 1_000), limit.maxConcurrent ?? null]);
  }

  /** The graphs that have a limit: their jobs are claimed with `claimLimited`. */
  async limited(): Promise<Set<string>> {
    return new Set((await this.q('list_limited_graphs', [])).rows.map((r) => r.graph as string));
  }

  /** Removes a graph's limits; false when it had none. */
  async remove(graph: string): Promise<boolean> {
    return (await this.q('delete_graph_limit', [graph])).rowCount === 1;
  }

  /** Every graph limit, with its leased runs now and the accepted jobs it is holding back. */
  async list(): Promise<GraphLimit[]> {
    return (await this.q('list_graph_limits', [])).rows.map((r) => ({
      graph: r.graph,
      maxPerInterval: r.max_per_interval ?? null,
      intervalMs: r.interval_ms ?? null,
      maxConcurrent: r.max_concurrent ?? null,
      running: r.running,
      heldBack: r.held_back,
    }));
  }
}
