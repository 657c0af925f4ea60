import fastifySse from '@fastify/sse';
import { serializeChunk } from '@runledger/runtime';
import type { FastifyInstance } from 'fastify';
import type { RouteDeps } from '../options';
import { assistantRoutes } from './assistant-routes';
import { langGraphDeps } from './context';

export { type CorsPolicy, corsOptions, corsPolicy } from './cors';

import { runStreamRoutes } from './run-stream';
import { runRoutes } from './runs';
import { threadRoutes } from './threads';

/**
 * The LangGraph Server API beside /v1, at the paths the official `@langchain/langgraph-sdk`
 * Client calls (/assistants, /threads, /runs). Same authentication (Bearer or x-api-key),
 * tenants, validation and error shape as /v1; a run is a job, admitted the same way.
 */
export async function langGraphApi(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  const d = langGraphDeps(deps);
  // LangChain objects (messages in thread values) go out as the reference server writes them.
  app.setReplySerializer((payload) => serializeChunk(payload));
  // Heartbeats are run-stream.ts's own `: ping` lines (the plugin's end with a blank line).
  await app.register(fastifySse, { heartbeatInterval: 0, serializer: serializeChunk });
  await app.register(assistantRoutes, d);
  await app.register(threadRoutes, d);
  await app.register(runRoutes, d);
  await app.register(runStreamRoutes, d);
}
