import type { LangGraphThread } from '@runledger/ledger';
import { runRequestOf } from '@runledger/runtime';
import type { LangGraphDeps } from './context';

/** Keys of a run's `configurable` that name a place in the thread, not the graph: never carried over. */
const PLACE_KEYS = new Set(['thread_id', 'checkpoint_id', 'checkpoint_ns', 'checkpoint_map', 'runledger']);

/**
 * The `configurable` of the thread's latest run (its merged LANGGRAPH_CONFIG < assistant < run
 * config), as LangGraph's server keeps it as the thread's config: a graph factory that chose its
 * nodes from it builds the same graph for a state update. Empty before the first run.
 */
export async function threadConfigurable(d: LangGraphDeps, thread: LangGraphThread): Promise<Record<string, unknown>> {
  if (!thread.latestJob) return {};
  const job = await d.ledger.get(thread.latestJob.jobId, thread.tenant);
  const configurable = runRequestOf(job.metadata)?.config?.configurable ?? {};
  return Object.fromEntries(Object.entries(configurable).filter(([k]) => !PLACE_KEYS.has(k)));
}
