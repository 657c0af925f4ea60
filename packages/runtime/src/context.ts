import type { LangGraphRunnableConfig } from '@langchain/langgraph';
import type { Ledger } from '@runledger/ledger';

/**
 * The ledger as a graph's nodes and tools reach it: their attempt's events and effects (every
 * write fenced by the attempt's token), and the ledger's pool for a provider that keeps its rows in
 * the same database (the demo bookings). Not the job's life: no claim, cancel, upgrade or rollback.
 */
export interface RunLedger {
  appendEvent: Ledger['appendEvent'];
  findEffect: Ledger['findEffect'];
  recordEffectIntent: Ledger['recordEffectIntent'];
  settleEffect: Ledger['settleEffect'];
  readonly pool: Ledger['pool'];
}

/** What a node or tool knows about the attempt running it. Passed as `configurable.runledger`. */
export interface RunContext {
  jobId: string;
  threadId: string;
  fencingToken: number;
  /** 1 for the first attempt; drained hand-overs do not count. */
  attempt: number;
  ledger: RunLedger;
  /** Aborted when the lease is lost, the job is cancelled, the time limit passes or the worker drains. */
  signal: AbortSignal;
}

/** The run context of the current attempt; throws when the graph is run outside Runledger. */
export function runContext(config: LangGraphRunnableConfig | undefined): RunContext {
  const ctx = (config?.configurable as { runledger?: RunContext } | undefined)?.runledger;
  if (!ctx) throw new Error('No Runledger run context in config.configurable.runledger: this node must run inside a Runledger worker.');
  return ctx;
}

/** Sleeps `ms`, rejecting with the signal's reason as soon as it aborts. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Records that a node was entered, as a fenced `node_entered` event (used by tests and the timeline). */
export async function traceNode(config: LangGraphRunnableConfig | undefined, node: string, enabled: boolean): Promise<void> {
  if (!enabled) return;
  const ctx = runContext(config);
  await ctx.ledger.appendEvent(ctx.jobId, ctx.fencingToken, 'node_entered', { node });
}
