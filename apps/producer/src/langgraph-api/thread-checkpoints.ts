import { setImmediate } from 'node:timers/promises';
import type { LangGraphThread } from '@runledger/ledger';
import { type GraphDefinition, serializeChunk } from '@runledger/runtime';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { ApiError } from '../http-errors';
import type { LangGraphDeps } from './context';
import { CheckpointParams, HistoryQuery, StateAtCheckpoint, StateQuery, ThreadParams } from './schemas';
import { threadStateView } from './thread-state';

const doc = { tags: ['langgraph'] };

/** How the thread routes find the caller's thread (404 otherwise) and the graph whose checkpoints it holds. */
export interface ThreadFinder {
  thread(request: FastifyRequest): Promise<LangGraphThread>;
  graph(thread: LangGraphThread): GraphDefinition | undefined;
}

type CheckpointRef = z.infer<typeof StateAtCheckpoint>['checkpoint'];

/** A checkpoint reference's id and namespace (a subgraph's checkpoint: `checkpoint_ns`, as LangGraph addresses it). */
function refOf(ref: CheckpointRef): { checkpointId?: string; checkpointNs?: string } {
  return { checkpointId: ref?.checkpoint_id ?? undefined, checkpointNs: ref?.checkpoint_ns || undefined };
}

/**
 * A thread's past states, newest first, as LangGraph's history routes answer them (GET and POST):
 * serialised one snapshot at a time, yielding to other requests between them, and cut before
 * HISTORY_MAX_BYTES (at least one snapshot), `X-Pagination-Next` naming the `before` that continues it.
 */
export async function historyOf(
  d: LangGraphDeps,
  reply: FastifyReply,
  thread: LangGraphThread,
  graph: GraphDefinition | undefined,
  q: { limit?: number; before?: string; metadata?: Record<string, unknown>; checkpoint?: CheckpointRef },
) {
  const { checkpointId, checkpointNs } = refOf(q.checkpoint);
  const parts: string[] = [];
  let bytes = 0;
  let last: string | undefined;
  if (graph)
    for await (const s of d.states.history(graph, thread, q.limit ?? 10, q.before, { metadata: q.metadata, checkpointId, checkpointNs })) {
      const view = threadStateView(s, thread.threadId);
      const text = serializeChunk(view);
      if (parts.length > 0 && bytes + Buffer.byteLength(text) > d.stateLimits.historyMaxBytes) {
        if (last) reply.header('x-pagination-next', last);
        break;
      }
      parts.push(text);
      bytes += Buffer.byteLength(text);
      last = view.checkpoint?.checkpoint_id;
      await setImmediate();
    }
  return reply.type('application/json; charset=utf-8').send(`[${parts.join(',')}]`);
}

/** A thread's state at one checkpoint (GET by id, POST by reference) and its history by GET. */
export async function threadCheckpointRoutes(app: FastifyInstance, d: LangGraphDeps, find: ThreadFinder): Promise<void> {
  const stateAt = async (request: FastifyRequest, ref: { checkpointId?: string; checkpointNs?: string }, subgraphs: boolean) => {
    const thread = await find.thread(request);
    const graph = find.graph(thread);
    const { checkpointId, checkpointNs } = ref;
    const state = graph && (checkpointId || checkpointNs) ? await d.states.at(graph, thread, checkpointId, subgraphs, checkpointNs) : undefined;
    const named = `${checkpointId ?? (checkpointNs ? '(newest)' : '(none named)')}${checkpointNs ? ` in namespace "${checkpointNs}"` : ''}`;
    if (!state) throw new ApiError(404, 'not_found', `Thread ${thread.threadId} has no checkpoint ${named}.`);
    return threadStateView(state, thread.threadId);
  };

  app.get(
    '/threads/:thread_id/state/:checkpoint_id',
    { schema: { ...doc, summary: "A thread's state at one of its checkpoints", params: CheckpointParams, querystring: StateQuery } },
    async (request) => {
      const { checkpoint_id } = request.params as z.infer<typeof CheckpointParams>;
      const { subgraphs } = request.query as z.infer<typeof StateQuery>;
      return stateAt(request, { checkpointId: checkpoint_id }, subgraphs === '1' || subgraphs === 'true');
    },
  );

  app.post(
    '/threads/:thread_id/state/checkpoint',
    { schema: { ...doc, summary: "A thread's state at the checkpoint named in the body", params: ThreadParams, body: StateAtCheckpoint } },
    async (request) => {
      const body = (request.body ?? {}) as z.infer<typeof StateAtCheckpoint>;
      return stateAt(request, refOf(body.checkpoint), body.subgraphs === true);
    },
  );

  app.get(
    '/threads/:thread_id/history',
    { schema: { ...doc, summary: "A thread's past states, newest first", params: ThreadParams, querystring: HistoryQuery } },
    async (request, reply) => {
      const thread = await find.thread(request);
      return historyOf(d, reply, thread, find.graph(thread), request.query as z.infer<typeof HistoryQuery>);
    },
  );
}
