import { randomUUID } from 'node:crypto';
import type { LangGraphThread } from '@runledger/ledger';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { ApiError } from '../http-errors';
import { admissionTenant, tenantScope } from '../security';
import { matchesFilters } from './auth-filters';
import { authFiltersOf } from './auth-hook';
import type { LangGraphDeps } from './context';
import { HistoryBody, StateQuery, StateUpdate, ThreadCount, ThreadCreate, ThreadParams, ThreadPatch, ThreadSearch } from './schemas';
import { applySupersteps, updateThreadState } from './state-write';
import { jobStatusesOf, threadStatus } from './status';
import { historyOf, threadCheckpointRoutes } from './thread-checkpoints';
import { copyThread } from './thread-copy';
import { EMPTY_STATE, interruptsOf, threadStateView } from './thread-state';

// In /openapi.json under the `langgraph` tag, from the same schemas that validate the requests.
const doc = { tags: ['langgraph'] };

/** The graph whose checkpoints a thread holds: its newest job's, else the graph_id it was created for. */
function graphOf(d: LangGraphDeps, t: LangGraphThread) {
  const id = t.latestJob?.graph ?? (typeof t.metadata.graph_id === 'string' ? t.metadata.graph_id : undefined);
  return id ? d.assistants.find(id) : undefined;
}

/** The LangGraph API's Thread object: status from the newest job, values and interrupts from the checkpoint. */
async function threadView(d: LangGraphDeps, t: LangGraphThread) {
  const graph = graphOf(d, t);
  // A thread without a checkpoint (no run, no state update yet) has no values.
  const read = graph ? await d.states.state(graph, t) : undefined;
  const state = read?.config?.configurable?.checkpoint_id ? read : undefined;
  return {
    thread_id: t.threadId,
    created_at: t.createdAt.toISOString(),
    updated_at: (t.latestJob && t.latestJob.updatedAt > t.updatedAt ? t.latestJob.updatedAt : t.updatedAt).toISOString(),
    metadata: t.metadata,
    status: threadStatus(t.latestJob?.status ?? null),
    values: state?.values ?? null,
    interrupts: state ? interruptsOf(state).byTask : {},
    config: {},
  };
}

async function threadOf(d: LangGraphDeps, request: FastifyRequest): Promise<LangGraphThread> {
  const { thread_id } = request.params as z.infer<typeof ThreadParams>;
  const found = await d.threads.get(thread_id, tenantScope(request));
  if (!found) throw new ApiError(404, 'not_found', `Thread ${thread_id} does not exist.`);
  return found;
}

/** Threads: create, read, patch metadata, delete, search, state, history. A tenant sees only its own threads. */
export async function threadRoutes(app: FastifyInstance, d: LangGraphDeps): Promise<void> {
  await threadCheckpointRoutes(app, d, { thread: (request) => threadOf(d, request), graph: (t) => graphOf(d, t) });
  app.post('/threads', { schema: { ...doc, summary: 'Create a thread', body: ThreadCreate } }, async (request) => {
    const body = request.body as z.infer<typeof ThreadCreate>;
    const metadata = Object.fromEntries(Object.entries(body.metadata ?? {}).filter(([, v]) => v !== undefined && v !== null));
    const graph = typeof metadata.graph_id === 'string' ? d.assistants.resolve(metadata.graph_id) : undefined;
    const supersteps = body.supersteps?.length ? body.supersteps : undefined;
    if (supersteps && !graph) throw new ApiError(400, 'invalid_request', 'body.supersteps needs metadata.graph_id: the graph whose state they update.');
    if (supersteps?.some((s) => s.updates.some((u) => u.command !== undefined && u.command !== null)))
      throw new ApiError(422, 'unsupported', 'body.supersteps[].updates[].command is not supported by Runledger yet; send values and as_node.');
    const threadId = body.thread_id ?? randomUUID();
    const created = await d.threads.create(threadId, admissionTenant(request), metadata);
    if (created && graph && supersteps) await applySupersteps(d, created, graph, supersteps);
    if (created) return threadView(d, created);
    // Threads are per tenant: an id another tenant uses is simply another thread.
    const mine = await d.threads.get(threadId, admissionTenant(request));
    if (!mine) throw new ApiError(503, 'retry', `Thread ${threadId} was deleted while it was being created; retry the request.`);
    // Under custom auth, another user's thread of that id is not handed out (LangGraph: 409).
    if (body.if_exists === 'do_nothing' && matchesFilters(mine.metadata, authFiltersOf(request))) return threadView(d, mine);
    throw new ApiError(409, 'conflict', `Thread ${threadId} exists (send if_exists: "do_nothing" to get it instead).`);
  });

  app.get('/threads/:thread_id', { schema: { ...doc, summary: 'Read a thread', params: ThreadParams } }, async (request) =>
    threadView(d, await threadOf(d, request)),
  );

  app.patch(
    '/threads/:thread_id',
    { schema: { ...doc, summary: "Merge metadata into a thread's", params: ThreadParams, body: ThreadPatch } },
    async (request) => {
      const thread = await threadOf(d, request);
      await d.threads.mergeMetadata(thread.threadId, tenantScope(request), (request.body as z.infer<typeof ThreadPatch>).metadata);
      return threadView(d, await threadOf(d, request));
    },
  );

  app.delete(
    '/threads/:thread_id',
    { schema: { ...doc, summary: 'Delete a thread and its checkpoints (its runs stay as jobs)', params: ThreadParams } },
    async (request, reply) => {
      const thread = await threadOf(d, request);
      const { deleted, openJob } = await d.threads.delete(thread.threadId, tenantScope(request));
      if (openJob) throw new ApiError(409, 'thread_busy', `Thread ${thread.threadId} has a run that has not finished (${openJob}); cancel it first.`);
      if (!deleted) throw new ApiError(404, 'not_found', `Thread ${thread.threadId} does not exist.`);
      return reply.code(204).send();
    },
  );

  app.post('/threads/search', { schema: { ...doc, summary: 'Search threads (default newest first)', body: ThreadSearch } }, async (request) => {
    const q = (request.body ?? {}) as z.infer<typeof ThreadSearch>;
    const found = await d.threads.search({
      tenant: tenantScope(request),
      ids: q.ids,
      metadata: q.metadata,
      jobStatuses: q.status ? jobStatusesOf(q.status) : undefined,
      limit: q.limit ?? 10,
      offset: q.offset ?? 0,
      sortBy: q.sort_by,
      sortOrder: q.sort_order,
    });
    const views = await Promise.all(found.map((t) => threadView(d, t)));
    const select = q.select;
    return select ? views.map((v) => Object.fromEntries(Object.entries(v).filter(([k]) => (select as string[]).includes(k)))) : views;
  });

  app.post(
    '/threads/:thread_id/copy',
    { schema: { ...doc, summary: 'Copy a thread with its checkpoints into a new thread', params: ThreadParams } },
    async (request) => threadView(d, await copyThread(d, await threadOf(d, request))),
  );

  app.post('/threads/count', { schema: { ...doc, summary: 'Count threads (metadata, status filters)', body: ThreadCount } }, async (request) => {
    const q = (request.body ?? {}) as z.infer<typeof ThreadCount>;
    return d.threads.count({ tenant: tenantScope(request), metadata: q.metadata, jobStatuses: q.status ? jobStatusesOf(q.status) : undefined });
  });

  app.get(
    '/threads/:thread_id/state',
    { schema: { ...doc, summary: "A thread's current state (subgraphs: with its subgraphs' states)", params: ThreadParams, querystring: StateQuery } },
    async (request) => {
      const thread = await threadOf(d, request);
      const graph = graphOf(d, thread);
      if (!graph) return EMPTY_STATE;
      const { subgraphs } = request.query as z.infer<typeof StateQuery>;
      return threadStateView(await d.states.state(graph, thread, subgraphs === '1' || subgraphs === 'true'), thread.threadId);
    },
  );

  app.post(
    '/threads/:thread_id/state',
    {
      schema: {
        ...doc,
        summary: "Update a thread's state (as_node: as that node's output); 409 while a run holds the thread",
        params: ThreadParams,
        body: StateUpdate,
      },
    },
    async (request) => {
      const thread = await threadOf(d, request);
      const graph = graphOf(d, thread);
      if (!graph) throw new ApiError(409, 'invalid_state', `Thread ${thread.threadId} has no graph yet: run it once, or create it with metadata.graph_id.`);
      return updateThreadState(d, thread, graph, request.body as StateUpdate);
    },
  );

  app.post(
    '/threads/:thread_id/history',
    {
      schema: {
        ...doc,
        summary: "A thread's past states, newest first; cut at HISTORY_MAX_BYTES, X-Pagination-Next naming the `before` that continues it",
        params: ThreadParams,
        body: HistoryBody,
      },
    },
    async (request, reply) => {
      const thread = await threadOf(d, request);
      const q = (request.body ?? {}) as z.infer<typeof HistoryBody>;
      const before = typeof q.before === 'string' ? q.before : q.before?.configurable.checkpoint_id;
      return historyOf(d, reply, thread, graphOf(d, thread), { limit: q.limit, before, metadata: q.metadata, checkpoint: q.checkpoint });
    },
  );
}
