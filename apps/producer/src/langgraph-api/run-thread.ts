import type { LangGraphThread } from '@runledger/ledger';
import type { GraphDefinition } from '@runledger/runtime';
import { assistantIdOf } from './assistants';
import type { LangGraphDeps } from './context';

/**
 * Writes a run's `graph_id` and `assistant_id` into its thread's metadata, as LangGraph's server
 * does when a run is created (agent-chat-ui lists a graph's threads by them). `asked`: the
 * assistant id the run named (a graph id names that graph's default assistant). No write when
 * the thread carries both already.
 */
export async function tagThread(d: LangGraphDeps, thread: LangGraphThread, graph: GraphDefinition, asked: string): Promise<void> {
  const tags = { graph_id: graph.name, assistant_id: asked === graph.name ? assistantIdOf(graph.name) : asked };
  if (thread.metadata.graph_id === tags.graph_id && thread.metadata.assistant_id === tags.assistant_id) return;
  await d.threads.mergeMetadata(thread.threadId, thread.tenant, tags);
}
