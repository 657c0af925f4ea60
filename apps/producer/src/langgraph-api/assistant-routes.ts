import { MemorySaver } from '@langchain/langgraph';
import type { FastifyInstance } from 'fastify';
import type { z } from 'zod';
import { ApiError } from '../http-errors';
import { assistantView } from './assistants';
import type { LangGraphDeps } from './context';
import { AssistantParams, AssistantSearch } from './schemas';

// In /openapi.json under the `langgraph` tag, from the same schemas that validate the requests.
const doc = { tags: ['langgraph'] };

/**
 * A JSON schema of an object with a graph's channels as its properties (any type each): what a
 * compiled graph tells of its shape without a typed state schema; null when it names none.
 */
function channelSchema(channels: unknown): Record<string, unknown> | null {
  const names = typeof channels === 'string' ? [channels] : Array.isArray(channels) ? channels.filter((c) => typeof c === 'string') : [];
  if (names.length === 0) return null;
  return { type: 'object', properties: Object.fromEntries(names.map((n) => [n, {}])) };
}

/** Assistants: one default assistant per registered graph, found by assistant id or graph id. */
export async function assistantRoutes(app: FastifyInstance, d: LangGraphDeps): Promise<void> {
  const byParam = (params: unknown) => d.assistants.resolve((params as z.infer<typeof AssistantParams>).assistant_id);

  app.post('/assistants/search', { schema: { ...doc, summary: 'Search assistants', body: AssistantSearch } }, async (request) => {
    const q = (request.body ?? {}) as z.infer<typeof AssistantSearch>;
    const wantedMetadata = Object.entries(q.metadata ?? {});
    const all = d.assistants
      .all()
      .map(assistantView)
      .filter(
        (a) => (q.graph_id === undefined || a.graph_id === q.graph_id) && wantedMetadata.every(([k, v]) => (a.metadata as Record<string, unknown>)[k] === v),
      );
    const offset = q.offset ?? 0;
    return all.slice(offset, offset + (q.limit ?? 10));
  });

  app.get('/assistants/:assistant_id', { schema: { ...doc, summary: 'Read an assistant', params: AssistantParams } }, async (request) =>
    assistantView(byParam(request.params)),
  );

  app.get(
    '/assistants/:assistant_id/graph',
    { schema: { ...doc, summary: "An assistant's graph as nodes and edges", params: AssistantParams } },
    async (request) => {
      const graph = byParam(request.params).build(new MemorySaver()) as { getGraphAsync?: () => Promise<{ toJSON(): unknown }> };
      if (typeof graph.getGraphAsync !== 'function') throw new ApiError(422, 'unsupported', 'This graph cannot be drawn.');
      return (await graph.getGraphAsync()).toJSON();
    },
  );

  app.get(
    '/assistants/:assistant_id/schemas',
    { schema: { ...doc, summary: "An assistant's JSON schemas: objects of the graph's channels (null where it names none)", params: AssistantParams } },
    async (request) => {
      const g = byParam(request.params);
      const compiled = g.build(new MemorySaver()) as { inputChannels?: unknown; outputChannels?: unknown; streamChannelsAsIs?: unknown };
      return {
        graph_id: g.name,
        input_schema: channelSchema(compiled.inputChannels),
        output_schema: channelSchema(compiled.outputChannels),
        state_schema: channelSchema(compiled.streamChannelsAsIs),
        config_schema: null,
        context_schema: null,
      };
    },
  );
}
