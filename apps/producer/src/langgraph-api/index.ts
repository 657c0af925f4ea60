import fastifySse from '@fastify/sse';
import type { CustomAuth } from '@runledger/runtime';
import { serializeChunk } from '@runledger/runtime';
import type { FastifyInstance } from 'fastify';
import type { RouteDeps, StreamOptions } from '../options';
import { assistantRoutes } from './assistant-routes';
import { customAuthHook } from './auth-hook';
import { langGraphDeps } from './context';
import { cronRoutes } from './cron-routes';
import { metaRoutes } from './meta';
import type { ThreadStateLimits } from './thread-state';

export { type CorsPolicy, corsOptions, corsPolicy } from './cors';
export { testHookRoutes } from './test-hooks';

import { mcpRoutes } from './mcp';
import { runStreamRoutes } from './run-stream';
import { runRoutes } from './runs';
import { storeRoutes } from './store-routes';
import { threadRoutes } from './threads';

/**
 * The LangGraph Server API beside /v1, at the paths the official `@langchain/langgraph-sdk`
 * Client calls (/assistants, /threads, /runs). Same authentication (Bearer or x-api-key),
 * tenants, validation and error shape as /v1; a run is a job, admitted the same way.
 */
export async function langGraphApi(
  app: FastifyInstance,
  deps: RouteDeps & { streams?: StreamOptions; threadState?: Partial<ThreadStateLimits>; customAuth?: CustomAuth },
): Promise<void> {
  const d = langGraphDeps(deps, deps.streams, deps.threadState, deps.customAuth);
  // Custom auth (langgraph.json's auth.path): the `on(…)` handlers run before every route below.
  if (d.customAuth) app.addHook('preHandler', customAuthHook(d));
  app.addHook('onClose', () => d.typeSchemas.close());
  // LangChain objects (messages in thread values) go out as the reference server writes them.
  app.setReplySerializer((payload) => serializeChunk(payload));
  // Heartbeats are run-stream.ts's own `: ping` lines (the plugin's end with a blank line).
  await app.register(fastifySse, { heartbeatInterval: 0, serializer: serializeChunk });
  await app.register(metaRoutes);
  await app.register(assistantRoutes, d);
  await app.register(threadRoutes, d);
  await app.register(runRoutes, d);
  await app.register(cronRoutes, d);
  await app.register(runStreamRoutes, d);
  await app.register(storeRoutes, d);
  await app.register(mcpRoutes, d);
}
