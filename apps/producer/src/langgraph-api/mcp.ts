import { MemorySaver } from '@langchain/langgraph';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { GraphDefinition } from '@runledger/runtime';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { tenantScope } from '../security';
import type { LangGraphDeps } from './context';
import { createRun } from './run-admission';
import { finalValues, settledJob } from './run-views';
import type { RunCreate } from './schemas';

// In /openapi.json under the `langgraph` tag.
const doc = { tags: ['langgraph'] };

/** How long a tool call waits for its run before it answers with the run id to join instead. */
const CALL_WAIT_MS = 10 * 60_000;

/** A tool's input schema: the graph's input fields as an object of any-typed properties (MCP needs an object schema). */
function inputSchema(g: GraphDefinition): { type: 'object'; properties: Record<string, object> } {
  const compiled = g.build(new MemorySaver()) as { builder?: { _inputDefinition?: unknown; channels?: unknown } };
  const fields = compiled.builder?._inputDefinition ?? compiled.builder?.channels;
  const names = typeof fields === 'object' && fields !== null ? Object.keys(fields) : [];
  return { type: 'object', properties: Object.fromEntries(names.map((n) => [n, {}])) };
}

/**
 * The MCP server of one request (stateless, as LangGraph Platform's /mcp): every assistant is a
 * tool named by its graph id; a call is a run on a new thread, admitted like POST /runs/wait (so
 * leased, fenced and recovered like every job), answered with its final values.
 */
function mcpServer(d: LangGraphDeps, request: FastifyRequest): Server {
  const server = new Server({ name: 'runledger', version: '1' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: d.assistants.all().map((g) => ({ name: g.name, description: g.description, inputSchema: inputSchema(g) })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async ({ params }) => {
    const graph = d.assistants.all().find((g) => g.name === params.name);
    if (!graph) throw new McpError(ErrorCode.InvalidParams, `No tool (assistant) named "${params.name}".`);
    const body = { assistant_id: graph.name, input: params.arguments ?? {} } as RunCreate;
    const { job } = await createRun(d, request, undefined, body, false);
    const end = Date.now() + CALL_WAIT_MS;
    const settled = await settledJob(d.ledger, job.jobId, tenantScope(request), () => Date.now() > end);
    if (!settled) return { content: [{ type: 'text', text: `Run ${job.jobId} is still running; join it with GET /runs/${job.jobId}/join.` }] };
    const values = await finalValues(d, settled);
    const failed = settled.status !== 'completed';
    return { isError: failed, content: [{ type: 'text', text: JSON.stringify(values ?? null) }] };
  });
  return server;
}

/** POST /mcp: MCP over the streamable HTTP transport, stateless (no session; GET and DELETE answer 405). */
export async function mcpRoutes(app: FastifyInstance, d: LangGraphDeps): Promise<void> {
  app.post('/mcp', { schema: { ...doc, summary: 'MCP (streamable HTTP): assistants as tools' } }, async (request, reply) => {
    const server = mcpServer(d, request);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    reply.hijack();
    await transport.handleRequest(request.raw, reply.raw, request.body);
  });
  const noSession = (_: FastifyRequest, reply: import('fastify').FastifyReply) =>
    reply
      .code(405)
      .header('allow', 'POST')
      .send({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this MCP endpoint is stateless (POST only).' }, id: null });
  app.get('/mcp', { schema: { ...doc, hide: true } }, noSession);
  app.delete('/mcp', { schema: { ...doc, hide: true } }, noSession);
}
