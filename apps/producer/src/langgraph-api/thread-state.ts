import type { StateSnapshot } from '@langchain/langgraph';
import { type LangGraphThread, type Ledger, langGraphThreadId, ThreadSaver } from '@runledger/ledger';
import type { GraphDefinition, RunnableGraph } from '@runledger/runtime';

type HistoryGraph = RunnableGraph & {
  getState(config: { configurable: Record<string, unknown> }, options?: { subgraphs?: boolean }): Promise<StateSnapshot>;
  getStateHistory(
    config: { configurable: Record<string, unknown> },
    options?: { limit?: number; before?: { configurable: Record<string, unknown> }; filter?: Record<string, unknown> },
  ): AsyncIterable<StateSnapshot>;
};

/** Bounds on what a thread's state may hold and what one history answer carries. */
export interface ThreadStateLimits {
  /** A state update that would leave the thread's values larger (as JSON) answers 413. Default 8 MiB (MAX_THREAD_STATE_BYTES). */
  maxBytes: number;
  /** A history answer stops before the snapshot that would take it past this (at least one). Default 4 MiB (HISTORY_MAX_BYTES). */
  historyMaxBytes: number;
}

export const DEFAULT_THREAD_STATE_LIMITS: ThreadStateLimits = { maxBytes: 8 * 1024 * 1024, historyMaxBytes: 4 * 1024 * 1024 };

/**
 * A LangGraph API checkpoint reference of a snapshot config, named by the API's thread id (not the
 * tenant's LangGraph one); `checkpoint_map` null unless the config has one, as the Platform's, so a
 * reference in a state equals the same checkpoint's in a `debug` stream.
 */
function checkpointOf(config: StateSnapshot['config'] | undefined, threadId: string) {
  const c = (config?.configurable ?? {}) as Record<string, unknown>;
  if (typeof c.checkpoint_id !== 'string') return null;
  const map = c.checkpoint_map && typeof c.checkpoint_map === 'object' ? (c.checkpoint_map as Record<string, unknown>) : null;
  return { thread_id: threadId, checkpoint_ns: (c.checkpoint_ns as string | undefined) ?? '', checkpoint_id: c.checkpoint_id, checkpoint_map: map };
}

/**
 * A subgraph task's checkpoint as LangGraph's server answers it: the task state's `configurable`
 * (`thread_id`, `checkpoint_ns`, and `checkpoint_id` once the subgraph has one), named by the API's thread id.
 */
function taskCheckpointOf(config: StateSnapshot['config'], threadId: string) {
  const c = (config?.configurable ?? {}) as Record<string, unknown>;
  const keep = Object.fromEntries(['checkpoint_ns', 'checkpoint_id', 'checkpoint_map'].filter((k) => c[k] !== undefined).map((k) => [k, c[k]]));
  return { ...keep, thread_id: threadId };
}

/** LangGraph's refusal of a `checkpoint_ns` naming no subgraph of the graph. */
export const isUnknownSubgraph = (err: unknown) => err instanceof Error && /^Subgraph ".*" not found$/.test(err.message);

/** A subgraph's history, empty when the graph has no such subgraph. */
async function* knownSubgraph(pages: AsyncIterable<StateSnapshot>): AsyncGenerator<StateSnapshot> {
  try {
    yield* pages;
  } catch (err) {
    if (!isUnknownSubgraph(err)) throw err;
  }
}

const isSnapshot = (s: NonNullable<StateSnapshot['tasks'][number]['state']>): s is StateSnapshot => 'values' in s && 'next' in s;

type CheckpointRef = ReturnType<typeof checkpointOf>;

/** The LangGraph API's ThreadState. */
export interface ThreadStateView {
  values: unknown;
  next: string[];
  tasks: Array<{
    id: string;
    name: string;
    path: unknown[];
    error: unknown;
    interrupts: unknown[];
    checkpoint: Record<string, unknown> | null;
    state: ThreadStateView | null;
    result: unknown;
  }>;
  checkpoint: CheckpointRef;
  parent_checkpoint: CheckpointRef;
  metadata: unknown;
  created_at: string | null;
}

/** The LangGraph API's ThreadState of a snapshot of thread `threadId`. */
export function threadStateView(s: StateSnapshot, threadId: string): ThreadStateView {
  return {
    values: s.values ?? {},
    next: [...s.next],
    tasks: s.tasks.map((t) => ({
      id: t.id,
      name: t.name,
      error: t.error ?? null,
      path: [...(t.path ?? [])],
      interrupts: [...t.interrupts],
      // A subgraph task's state: its snapshot when read with `subgraphs`, else its checkpoint.
      checkpoint: t.state && !isSnapshot(t.state) ? taskCheckpointOf(t.state, threadId) : null,
      state: t.state && isSnapshot(t.state) ? threadStateView(t.state, threadId) : null,
      result: t.result ?? null,
    })),
    checkpoint: checkpointOf(s.config, threadId),
    parent_checkpoint: checkpointOf(s.parentConfig, threadId),
    metadata: s.metadata ?? {},
    created_at: s.createdAt ?? null,
  };
}

/** A thread's empty state, before its first run. */
export const EMPTY_STATE = { values: {}, next: [], tasks: [], checkpoint: null, parent_checkpoint: null, metadata: {}, created_at: null };

/** The pending interrupts of a snapshot by task id, and as one list. */
export function interruptsOf(s: StateSnapshot): { byTask: Record<string, unknown[]>; all: unknown[] } {
  const byTask: Record<string, unknown[]> = {};
  const all: unknown[] = [];
  for (const t of s.tasks)
    if (t.interrupts.length) {
      byTask[t.id] = [...t.interrupts];
      all.push(...t.interrupts);
    }
  return { byTask, all };
}

/**
 * Reads threads' checkpoints through their graphs: an unfenced saver on the ledger's pool (read
 * only) that opens values sealed with the ledger's codec; one compiled graph per name.
 */
export class ThreadStateReader {
  private readonly saver: ThreadSaver;
  private readonly compiled = new Map<string, HistoryGraph>();

  constructor(ledger: Ledger, schema: string) {
    this.saver = new ThreadSaver(ledger.pool, { schema, codec: ledger.payloadCodec });
  }

  private graph(def: GraphDefinition): HistoryGraph {
    let g = this.compiled.get(def.name);
    if (!g) {
      g = def.build(this.saver) as HistoryGraph;
      this.compiled.set(def.name, g);
    }
    return g;
  }

  /** The thread's checkpoints live under its tenant's LangGraph thread id (langGraphThreadId). */
  state(def: GraphDefinition, thread: Pick<LangGraphThread, 'tenant' | 'threadId'>, subgraphs = false): Promise<StateSnapshot> {
    return this.graph(def).getState({ configurable: { thread_id: langGraphThreadId(thread.tenant, thread.threadId) } }, { subgraphs });
  }

  /**
   * The snapshot at one of the thread's checkpoints (`checkpointNs`: a subgraph's, its newest
   * without an id), or undefined when the thread has no such checkpoint or graph no such subgraph.
   */
  async at(
    def: GraphDefinition,
    thread: Pick<LangGraphThread, 'tenant' | 'threadId'>,
    checkpointId: string | undefined,
    subgraphs = false,
    checkpointNs = '',
  ): Promise<StateSnapshot | undefined> {
    const thread_id = langGraphThreadId(thread.tenant, thread.threadId);
    const configurable = { thread_id, ...(checkpointId ? { checkpoint_id: checkpointId } : {}), ...(checkpointNs ? { checkpoint_ns: checkpointNs } : {}) };
    try {
      const s = await this.graph(def).getState({ configurable }, { subgraphs });
      // LangGraph answers an empty snapshot (no metadata) for a checkpoint it does not find.
      return s.metadata === undefined ? undefined : s;
    } catch (err) {
      if (isUnknownSubgraph(err)) return undefined;
      throw err;
    }
  }

  /**
   * Up to `limit` snapshots, newest first, optionally before a checkpoint id, one at a time;
   * `filter`: only those whose metadata contains `metadata`, only the checkpoint `checkpointId`.
   * Read in pages of 1, 2, 4 … 64 checkpoints (the saver loads a page's blobs at once), so a
   * caller that stops early, at a byte budget, has not loaded the whole history of a large thread.
   */
  async *history(
    def: GraphDefinition,
    thread: Pick<LangGraphThread, 'tenant' | 'threadId'>,
    limit: number,
    beforeCheckpointId?: string,
    filter: { metadata?: Record<string, unknown>; checkpointId?: string; checkpointNs?: string } = {},
  ): AsyncGenerator<StateSnapshot> {
    const thread_id = langGraphThreadId(thread.tenant, thread.threadId);
    const ns = filter.checkpointNs ? { checkpoint_ns: filter.checkpointNs } : {};
    const config = { configurable: { thread_id, ...ns, ...(filter.checkpointId ? { checkpoint_id: filter.checkpointId } : {}) } };
    let before = beforeCheckpointId;
    for (let left = limit, page = 1; left > 0; page = Math.min(page * 2, 64)) {
      const options = {
        limit: Math.min(page, left),
        before: before ? { configurable: { thread_id, ...ns, checkpoint_id: before } } : undefined,
        filter: filter.metadata,
      };
      let read = 0;
      const pages = this.graph(def).getStateHistory(config, options);
      for await (const s of filter.checkpointNs ? knownSubgraph(pages) : pages) {
        read += 1;
        before = s.config?.configurable?.checkpoint_id as string | undefined;
        yield s;
      }
      if (read < options.limit || !before) return;
      left -= read;
    }
  }
}
