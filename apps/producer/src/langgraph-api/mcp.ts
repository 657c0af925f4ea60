import { MemorySaver } from '@langchain/langgraph';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { GraphDefinition } from '@runledger/runtime';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { admissionTenant } from '../security';
import { assistantIdOf } from './assistants';
import type { LangGraphDeps } from './context';
import { type DescribedGraph, graphSchemas } from './graph-schemas';
import { createRun } from './run-admission';
import { finalValues } from './run-views';
import type { RunCreate } from './schemas';

// In /openapi.json under the `langgraph` tag.
const doc = { tags: ['langgraph'] };

/** How long a tool call waits for its run before it answers with the run id to join instead. */
const CALL_WAIT_MS = 10 * 60_000;

/** Each graph's tool input schema, built once: a listing would otherwise compile every graph again. */
const inputSchemas = new WeakMap<GraphDefinition, Record<string, unknown>>();

/** A tool's input schema: the graph's input schema as its schemas answer gives it, always an object schema (as MCP needs). */
function inputSchema(g: GraphDefinition): Record<string, unknown> & { type: 'object' } {
  let schema = inputSchemas.get(g);
  if (!schema) {
    const input = graphSchemas(g.build(new MemorySaver()) as DescribedGraph).input;
    schema = input?.type === 'object' ? input : { type: 'object', properties: {} };
    inputSchemas.set(g, schema);
  }
  return schema as Record<string, unknown> & { type: 'object' };
}

/** MCP tool names: letters, digits, `_` and `-`, at most 64. */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** Tools one listing offers at most (the tenant's assistants, default ones first). */
const MAX_TOOLS = 200;

/** The tenant's assistants as tools: a default one by its graph id, a stored one by its name when that is a unique tool name, else by its id. */
async function tools(d: LangGraphDeps, tenant: string): Promise<Array<{ name: string; assistantId: string; graph: GraphDefinition; description?: string }>> {
  const { assistants } = await d.assistants.store.search(tenant, d.assistants.builtIns(), { limit: MAX_TOOLS, sortBy: 'created_at', sortOrder: 'asc' });
  const taken = new Map<string, number>();
  for (const a of assistants) taken.set(a.name, (taken.get(a.name) ?? 0) + 1);
  return assistants.flatMap((a) => {
    const graph = d.assistants.find(a.graphId);
    if (!graph) return [];
    const builtIn = a.assistantId === assistantIdOf(a.graphId) && a.name === a.graphId;
    const name = builtIn || (TOOL_NAME.test(a.name) && taken.get(a.name) === 1 && !d.assistants.find(a.name)) ? a.name : a.assistantId;
    return [{ name, assistantId: a.assistantId, graph, description: a.description ?? graph.description }];
  });
}

/**
 * The MCP server of one request (stateless, as LangGraph Platform's /mcp): every assistant of the
 * caller's tenant is a tool; a call is a run on a new thread, admitted like POST /runs/wait (so
 * leased, fenced and recovered like every job, with the assistant's config), answered with its
 * final values.
 */
function mcpServer(d: LangGraphDeps, request: FastifyRequest): Server {
  const server = new Server({ name: 'runledger', version: '1' }, { capabilities: { tools: {} } });
  const tenant = admissionTenant(request);
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: (await tools(d, tenant)).map((t) => ({ name: t.name, description: t.description, inputSchema: inputSchema(t.graph) })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async ({ params }) => {
    const tool = (await tools(d, tenant)).find((t) => t.name === params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `No tool (assistant) named "${params.name}".`);
    const body = { assistant_id: tool.assistantId, input: params.arguments ?? {} } as RunCreate;
    const { job } = await createRun(d, request, undefined, body, false);
    // On the run's shared tail, like every wait of this producer; given up after CALL_WAIT_MS.
    const settled = await d.tails.settled(job.jobId, AbortSignal.timeout(CALL_WAIT_MS));
    if (!settled) return { content: [{ type: 'text', text: `Run ${job.jobId} is still running; join it with GET /runs/${job.jobId}/join.` }] };
    const values = await finalValues(d, settled);
    const failed = settled.status !== 'completed';
    return { isError: failed, content: [{ type: 'text', text: JSON.stringify(values ?? null) }] };
  });
  return server;
}

/** POST /mcp: MCP over the streamable HTTP transport, stateless (no session; GET and DELETE answer 405). */
export async function mcpRoutes(app: FastifyInstance, d: LangGraphDeps): Promise<void> {
  app.post(
    '/mcp',
    // Not in /openapi.json: a JSON-RPC protocol with its own envelope (MCP's), not a REST route.
    { schema: { hide: true } },
    async (request, reply) => {
      const server = mcpServer(d, request);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      reply.raw.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      reply.hijack();
      await transport.handleRequest(request.raw, reply.raw, request.body);
    },
  );
  const noSession = (_: FastifyRequest, reply: import('fastify').FastifyReply) =>
    reply
      .code(405)
      .header('allow', 'POST')
      .send({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this MCP endpoint is stateless (POST only).' }, id: null });
  app.get('/mcp', { schema: { ...doc, hide: true } }, noSession);
  app.delete('/mcp', { schema: { ...doc, hide: true } }, noSession);
}
