import type { StateSnapshot } from '@langchain/langgraph';
import { type LangGraphThread, langGraphThreadId } from '@runledger/ledger';
import { type GraphDefinition, serializeChunk } from '@runledger/runtime';
import { ApiError } from '../http-errors';
import type { LangGraphDeps } from './context';
import type { StateUpdate } from './schemas';
import { threadConfigurable } from './thread-config';
import { isUnknownSubgraph } from './thread-state';

type Written = Promise<{ configurable?: Record<string, unknown> }>;

interface UpdatableGraph {
  updateState(config: { configurable: Record<string, unknown> }, values: unknown, asNode?: string): Written;
  bulkUpdateState(config: { configurable: Record<string, unknown> }, supersteps: Array<{ updates: Array<{ values?: unknown; asNode?: string }> }>): Written;
  getState(config: { configurable: Record<string, unknown> }): Promise<StateSnapshot>;
}

/** LangGraph's refusals of an update (unknown node, ambiguous writer, …): the request's fault. */
const REFUSED_UPDATE = new Set(['InvalidUpdateError', 'EmptyInputError']);

/**
 * Writes a thread-state update (`POST /threads/:tid/state`) through the thread's graph, as LangGraph's
 * `updateState` does (`as_node` picks the node the update is written as, which decides what runs
 * next), inside the ledger's thread-held transaction: refused with 409 thread_busy while a run
 * holds or awaits the thread. An update that leaves the thread's values larger than
 * `stateLimits.maxBytes` (as JSON) answers 413 state_too_large and is rolled back. Answers the new
 * checkpoint, named by the API's thread id.
 */
export async function updateThreadState(d: LangGraphDeps, thread: LangGraphThread, graph: GraphDefinition, body: StateUpdate) {
  const thread_id = langGraphThreadId(thread.tenant, thread.threadId);
  const from = body.checkpoint_id ?? body.checkpoint?.checkpoint_id;
  // A subgraph's checkpoint (`checkpoint_ns`): LangGraph writes the update into that subgraph's state.
  const ns = body.checkpoint?.checkpoint_ns ? { checkpoint_ns: body.checkpoint.checkpoint_ns } : {};
  // The thread's run config too: a graph factory builds the graph its runs had.
  const config = { configurable: { ...(await threadConfigurable(d, thread)), thread_id, ...ns, ...(from ? { checkpoint_id: from } : {}) } };
  try {
    const written = await d.threads.writeState(thread.threadId, thread.tenant, d.schema, async (saver) => {
      const g = graph.build(saver) as unknown as UpdatableGraph;
      const out = await g.updateState(config, body.values ?? null, body.as_node);
      // Read back in the same transaction: what the thread would hold once this commits.
      const bytes = Buffer.byteLength(serializeChunk((await g.getState({ configurable: { thread_id } })).values));
      const max = d.stateLimits.maxBytes;
      if (bytes > max)
        throw new ApiError(
          413,
          'state_too_large',
          `The update would leave the thread's state at ${bytes} bytes, over MAX_THREAD_STATE_BYTES (${max}); nothing was written.`,
        );
      return out;
    });
    const c = written.configurable ?? {};
    const checkpoint = { thread_id: thread.threadId, checkpoint_ns: c.checkpoint_ns ?? '', checkpoint_id: c.checkpoint_id };
    // The reference server answers { checkpoint }; SDK typings read it as a config's `configurable`.
    return { checkpoint, configurable: checkpoint };
  } catch (err) {
    const name = (err as Error).name;
    if (isUnknownSubgraph(err))
      throw new ApiError(
        422,
        'invalid_update',
        `body.checkpoint.checkpoint_ns names no subgraph of graph "${graph.name}": ${(err as Error).message}; nothing was written.`,
      );
    if (REFUSED_UPDATE.has(name)) throw new ApiError(422, 'invalid_update', `LangGraph refused the update: ${(err as Error).message}`);
    // LangChain's message refers to the value it refused: the client gets the gist, never the content.
    if ((err as { lc_error_code?: string }).lc_error_code === 'MESSAGE_COERCION_FAILURE')
      throw new ApiError(
        422,
        'invalid_update',
        'LangChain cannot read a message of the update as a message: send { type | role: human, ai, system, developer or tool (with tool_call_id), content } objects, [type, content] pairs or strings; nothing was written.',
      );
    throw err;
  }
}

/**
 * Applies a new thread's `supersteps` (thread create), as LangGraph's server does with
 * `bulkUpdateState`: each superstep's updates as one step, written as their `as_node`. A refused
 * update answers 422 and deletes the thread again, so a bad request leaves nothing behind.
 */
export async function applySupersteps(
  d: LangGraphDeps,
  thread: LangGraphThread,
  graph: GraphDefinition,
  supersteps: Array<{ updates: Array<{ values?: unknown; as_node: string }> }>,
): Promise<void> {
  const config = { configurable: { thread_id: langGraphThreadId(thread.tenant, thread.threadId) } };
  const steps = supersteps.map((s) => ({ updates: s.updates.map((u) => ({ values: u.values ?? null, asNode: u.as_node })) }));
  try {
    await d.threads.writeState(thread.threadId, thread.tenant, d.schema, (saver) =>
      (graph.build(saver) as unknown as UpdatableGraph).bulkUpdateState(config, steps),
    );
  } catch (err) {
    await d.threads.delete(thread.threadId, thread.tenant);
    if (REFUSED_UPDATE.has((err as Error).name)) throw new ApiError(422, 'invalid_update', `LangGraph refused body.supersteps: ${(err as Error).message}`);
    throw err;
  }
}
