import { MemorySaver } from '@langchain/langgraph';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ApiError } from '../http-errors';
import { ErrorBody } from '../schemas';
import { admissionTenant, checkMetadataSize } from '../security';
import { deleteAssistant } from './assistant-delete';
import { type Assistant, assistantView, versionView } from './assistants';
import type { LangGraphDeps } from './context';
import { type DescribedGraph, type GraphSchemas, graphSchemas, typedAtRuntime } from './graph-schemas';
import {
  AssistantCount,
  AssistantCreate,
  AssistantDeleteQuery,
  AssistantLatest,
  AssistantParams,
  AssistantPatch,
  AssistantSearch,
  AssistantVersions,
  SubgraphParams,
  SubgraphQuery,
} from './schemas';

// In /openapi.json under the `langgraph` tag, from the same schemas that validate the requests.
const doc = { tags: ['langgraph'] };

/**
 * A graph's (or its subgraph's, at `namespace`) schemas as LangGraph's server finds them: typed by
 * its runtime objects, else read from its TypeScript types, else its channels untyped.
 */
async function schemasOf(d: LangGraphDeps, request: FastifyRequest, graphId: string, g: DescribedGraph, namespace?: string): Promise<GraphSchemas> {
  const typed = typedAtRuntime(g) ? undefined : await d.typeSchemas.of(graphId, request.log, namespace);
  return typed ?? graphSchemas(g);
}

const idOf = (request: FastifyRequest) => (request.params as z.infer<typeof AssistantParams>).assistant_id;

/** A default assistant is derived from its graph: it cannot be changed or deleted. */
function writable(a: Assistant): Assistant {
  if (a.builtIn)
    throw new ApiError(
      409,
      'read_only',
      `Assistant ${a.assistantId} is graph "${a.graphId}"'s default assistant and cannot be changed; create one with graph_id "${a.graphId}" instead.`,
    );
  return a;
}

/**
 * Assistants: one default assistant per served graph (found by assistant id or graph id) and the
 * caller's tenant's stored ones, each change a new version. A tenant sees only its own.
 */
export async function assistantRoutes(app: FastifyInstance, d: LangGraphDeps): Promise<void> {
  const store = d.assistants.store;
  const assistantOf = (request: FastifyRequest) => d.assistants.get(admissionTenant(request), idOf(request));
  const graphOf = async (request: FastifyRequest) => (await d.assistants.withGraph(admissionTenant(request), idOf(request))).graph;

  app.post(
    '/assistants',
    { schema: { ...doc, summary: 'Create an assistant', body: AssistantCreate, response: { 200: z.unknown(), 409: ErrorBody, 422: ErrorBody } } },
    async (request) => {
      const body = request.body as AssistantCreate;
      const tenant = admissionTenant(request);
      d.assistants.served(body.graph_id);
      checkMetadataSize(request, body.metadata);
      const id = body.assistant_id ?? crypto.randomUUID();
      const fields = {
        graphId: body.graph_id,
        name: body.name ?? 'Untitled',
        description: body.description ?? null,
        config: body.config ?? {},
        context: body.context ?? {},
        metadata: body.metadata ?? {},
      };
      const created = d.assistants.find(id) ? undefined : await store.create(tenant, id, fields);
      if (created) return assistantView(created);
      const existing = await d.assistants.lookup(tenant, id);
      if (!existing) throw new ApiError(503, 'retry', `Assistant ${id} was deleted while it was being created; retry the request.`);
      if (body.if_exists === 'do_nothing') return assistantView(existing);
      throw new ApiError(409, 'conflict', `Assistant ${id} exists (send if_exists: "do_nothing" to get it instead).`);
    },
  );

  app.post('/assistants/search', { schema: { ...doc, summary: 'Search assistants', body: AssistantSearch } }, async (request, reply) => {
    const q = (request.body ?? {}) as z.infer<typeof AssistantSearch>;
    const offset = q.offset ?? 0;
    const filter = { graphId: q.graph_id, name: q.name, metadata: q.metadata };
    const page = { sortBy: q.sort_by, sortOrder: q.sort_order, limit: q.limit ?? 10, offset };
    const { assistants, total } = await store.search(admissionTenant(request), d.assistants.builtIns(), { ...filter, ...page });
    // As LangGraph's server: the total, and the next page's offset while there is one.
    reply.header('X-Pagination-Total', String(total));
    if (offset + assistants.length < total) reply.header('X-Pagination-Next', String(offset + assistants.length));
    const select = q.select;
    return assistants.map((found) => {
      // A default assistant's config and context are LANGGRAPH_CONFIG's, which the search does not carry.
      const a = d.assistants.builtIn(found.assistantId) ?? found;
      const view = assistantView(a);
      return select ? Object.fromEntries(Object.entries(view).filter(([k]) => (select as string[]).includes(k))) : view;
    });
  });

  app.post('/assistants/count', { schema: { ...doc, summary: 'Count assistants', body: AssistantCount } }, async (request) => {
    const q = (request.body ?? {}) as z.infer<typeof AssistantCount>;
    return store.count(admissionTenant(request), d.assistants.builtIns(), { graphId: q.graph_id, name: q.name, metadata: q.metadata });
  });

  app.get('/assistants/:assistant_id', { schema: { ...doc, summary: 'Read an assistant', params: AssistantParams } }, async (request) =>
    assistantView(await assistantOf(request)),
  );

  app.patch(
    '/assistants/:assistant_id',
    {
      schema: {
        ...doc,
        summary: 'Change an assistant: a new version, made current',
        params: AssistantParams,
        body: AssistantPatch,
        response: { 200: z.unknown(), 409: ErrorBody, 422: ErrorBody },
      },
    },
    async (request) => {
      const body = (request.body ?? {}) as AssistantPatch;
      const current = writable(await assistantOf(request));
      if (body.graph_id !== undefined) d.assistants.served(body.graph_id);
      checkMetadataSize(request, body.metadata);
      const patch = { graphId: body.graph_id, name: body.name, description: body.description, config: body.config, context: body.context };
      const updated = await store.update(admissionTenant(request), current.assistantId, { ...patch, metadata: body.metadata });
      if (!updated) throw new ApiError(404, 'not_found', `Assistant not found: ${current.assistantId} was deleted meanwhile.`);
      return assistantView(updated);
    },
  );

  app.delete(
    '/assistants/:assistant_id',
    {
      schema: {
        ...doc,
        summary: 'Delete an assistant and its versions (delete_threads=true: and the threads whose metadata.assistant_id names it)',
        params: AssistantParams,
        querystring: AssistantDeleteQuery,
      },
    },
    async (request) => {
      const assistant = writable(await assistantOf(request));
      const { delete_threads } = request.query as z.infer<typeof AssistantDeleteQuery>;
      await deleteAssistant(d, admissionTenant(request), assistant.assistantId, delete_threads === true);
      return [assistant.assistantId];
    },
  );

  app.post(
    '/assistants/:assistant_id/versions',
    { schema: { ...doc, summary: "An assistant's versions, newest first", params: AssistantParams, body: AssistantVersions } },
    async (request) => {
      const q = (request.body ?? {}) as z.infer<typeof AssistantVersions>;
      const a = await assistantOf(request);
      const versions = a.builtIn ? [a] : await store.versions(admissionTenant(request), a.assistantId, q);
      if (!versions.length) throw new ApiError(404, 'not_found', `Assistant ${a.assistantId} has no version matching the request.`);
      return versions.map(versionView);
    },
  );

  app.post(
    '/assistants/:assistant_id/latest',
    { schema: { ...doc, summary: "Make one of an assistant's versions the current one", params: AssistantParams, body: AssistantLatest } },
    async (request) => {
      const { version } = request.body as z.infer<typeof AssistantLatest>;
      const a = await assistantOf(request);
      const set = a.builtIn ? (version === 1 ? a : undefined) : await store.setLatest(admissionTenant(request), a.assistantId, version);
      if (!set) throw new ApiError(404, 'not_found', `Assistant ${a.assistantId} has no version ${version}.`);
      return assistantView(set);
    },
  );

  app.get(
    '/assistants/:assistant_id/graph',
    { schema: { ...doc, summary: "An assistant's graph as nodes and edges", params: AssistantParams } },
    async (request) => {
      const graph = (await graphOf(request)).build(new MemorySaver()) as { getGraphAsync?: () => Promise<{ toJSON(): unknown }> };
      if (typeof graph.getGraphAsync !== 'function') throw new ApiError(422, 'unsupported', 'This graph cannot be drawn.');
      return (await graph.getGraphAsync()).toJSON();
    },
  );

  app.get(
    '/assistants/:assistant_id/schemas',
    { schema: { ...doc, summary: "An assistant's JSON schemas (null where the graph names none)", params: AssistantParams } },
    async (request) => {
      const g = await graphOf(request);
      const { input, output, state, config } = await schemasOf(d, request, g.name, g.build(new MemorySaver()) as DescribedGraph);
      // As LangGraph's server answers them: a config schema is also the context schema (one in JS).
      return { graph_id: g.name, input_schema: input, output_schema: output, state_schema: state, config_schema: config, context_schema: config };
    },
  );

  const subgraphs = async (request: FastifyRequest) => {
    const { namespace } = request.params as z.infer<typeof SubgraphParams>;
    const { recurse } = request.query as z.infer<typeof SubgraphQuery>;
    const g = await graphOf(request);
    const compiled = g.build(new MemorySaver()) as { getSubgraphsAsync?: (ns?: string, recurse?: boolean) => AsyncIterable<[string, DescribedGraph]> };
    const out: Record<string, unknown> = {};
    if (typeof compiled.getSubgraphsAsync !== 'function') return out;
    // Each as LangGraph's server writes a subgraph's: { input, output, state, config }.
    for await (const [ns, sub] of compiled.getSubgraphsAsync(namespace, recurse)) {
      const { input, output, state, config } = await schemasOf(d, request, g.name, sub, ns);
      out[ns] = { input, output, state, config };
    }
    return out;
  };
  const subgraphDoc = { ...doc, summary: "The schemas of an assistant's subgraphs, by namespace", querystring: SubgraphQuery };
  app.get('/assistants/:assistant_id/subgraphs', { schema: { ...subgraphDoc, params: AssistantParams } }, subgraphs);
  app.get('/assistants/:assistant_id/subgraphs/:namespace', { schema: { ...subgraphDoc, params: SubgraphParams } }, subgraphs);
}
