import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../http-errors';
import { AuthRefused, admissionTenant, authUserOf, sendRefusal, tenantScope } from '../security';
import { type AuthFilters, authorize, containmentOf, matchesFilters } from './auth-filters';
import type { LangGraphDeps } from './context';

/** What a route is to the project's `on(…)` handlers: its event, and how its filter applies. */
interface RouteEvent {
  event: string;
  /** create: the handler may change body.metadata; search: the filter joins body.metadata; thread/run/assistant: the record must match. */
  kind: 'create' | 'search' | 'create_run' | 'thread' | 'run' | 'assistant' | 'store' | 'cron';
}

const RUN_CREATES = new Set(['/threads/:thread_id/runs', '/threads/:thread_id/runs/stream', '/threads/:thread_id/runs/wait']);
const STATELESS_RUNS = new Set(['/runs', '/runs/stream', '/runs/wait', '/mcp']);
/** Joins of a run's stream: a thread the filter hides is refused in the stream, by the route (joinRefusal). */
const STREAM_JOINS = new Set(['/threads/:thread_id/runs/:run_id/stream', '/runs/:run_id/stream']);

const verb = (method: string) => (method === 'DELETE' ? 'delete' : method === 'PATCH' ? 'update' : 'read');

/** The event of a LangGraph API route, as LangGraph's server names it; undefined for routes no handler sees (/info, /ok). */
export function routeEvent(method: string, route: string): RouteEvent | undefined {
  if (route === '/assistants' && method === 'POST') return { event: 'assistants:create', kind: 'create' };
  if (route === '/assistants/search' || route === '/assistants/count') return { event: 'assistants:search', kind: 'search' };
  if (route.startsWith('/assistants/:assistant_id')) return { event: `assistants:${route.endsWith('/latest') ? 'update' : verb(method)}`, kind: 'assistant' };
  if (route === '/runs/crons' || route === '/threads/:thread_id/runs/crons') return { event: 'crons:create', kind: 'cron' };
  if (route === '/runs/crons/search' || route === '/runs/crons/count') return { event: 'crons:search', kind: 'cron' };
  if (route.startsWith('/runs/crons/')) return { event: `crons:${verb(method)}`, kind: 'cron' };
  if (route === '/threads' && method === 'POST') return { event: 'threads:create', kind: 'create' };
  if (route === '/threads/search' || route === '/threads/count') return { event: 'threads:search', kind: 'search' };
  if ((RUN_CREATES.has(route) || STATELESS_RUNS.has(route)) && method === 'POST') return { event: 'threads:create_run', kind: 'create_run' };
  if (route.startsWith('/threads/:thread_id')) {
    const updates = method === 'POST' && (route === '/threads/:thread_id/state' || route.endsWith('/cancel'));
    return { event: `threads:${updates ? 'update' : verb(method)}`, kind: 'thread' };
  }
  if (route.startsWith('/runs/:run_id')) return { event: 'threads:read', kind: 'run' };
  if (route === '/store/items') return { event: `store:${method === 'PUT' ? 'put' : method === 'DELETE' ? 'delete' : 'get'}`, kind: 'store' };
  if (route === '/store/items/search') return { event: 'store:search', kind: 'store' };
  if (route === '/store/namespaces') return { event: 'store:list_namespaces', kind: 'store' };
  return undefined;
}

const filtersByRequest = new WeakMap<FastifyRequest, AuthFilters>();

/** The filter the request's handler returned (store routes and thread creation apply it themselves). */
export const authFiltersOf = (request: FastifyRequest): AuthFilters | undefined => filtersByRequest.get(request);

type Body = Record<string, unknown> & { metadata?: Record<string, unknown> | null };

/** The event's value as LangGraph's server passes it: the body (or query) plus the path's ids; metadata always an object. */
function eventValue(request: FastifyRequest, kind: RouteEvent['kind']): Body {
  const params = (request.params ?? {}) as Record<string, unknown>;
  const source = (request.method === 'GET' ? request.query : request.body) as Body | undefined;
  const value: Body = { ...source, ...params };
  if (kind === 'store' && request.method === 'GET') {
    const ns = (request.query as { namespace?: string }).namespace;
    value.namespace = ns ? ns.split('.') : [];
  }
  if (kind === 'store' && value.namespace_prefix !== undefined) value.namespace = value.namespace_prefix;
  if (kind === 'store' && value.prefix !== undefined) value.namespace = value.prefix;
  if (kind !== 'store') value.metadata = { ...(source?.metadata ?? {}) };
  return value;
}

/**
 * A copy, as LangGraph's server authorizes it: `threads:read` of the source (not matching → 409,
 * its answer for a thread it cannot copy), then `threads:create` of the copy, which may refuse.
 */
async function copyCheck(d: LangGraphDeps, request: FastifyRequest, reply: FastifyReply, filters: AuthFilters | undefined) {
  const { thread_id: threadId } = request.params as { thread_id: string };
  const thread = await d.threads.get(threadId, tenantScope(request));
  if (thread && !matchesFilters(thread.metadata, filters)) throw new ApiError(409, 'conflict', `Thread ${threadId} cannot be copied: not found.`);
  try {
    await authorize(d.customAuth, request, 'threads:create', { thread_id: undefined, metadata: { ...thread?.metadata } });
  } catch (err) {
    if (err instanceof AuthRefused) return sendRefusal(reply, err);
    throw err;
  }
  return undefined;
}

const notFound = (what: string, id: string) => new ApiError(404, 'not_found', `${what} ${id} does not exist.`);

/**
 * preHandler of the LangGraph API under custom auth: runs the route's `on(…)` handler and applies
 * its answer before the route writes or reads anything. A record the filter does not match
 * answers 404 as a missing one (LangGraph's answer); search and count see matching metadata only.
 */
export function customAuthHook(d: LangGraphDeps) {
  const auth = d.customAuth;
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    if (!auth || !authUserOf(request)) return undefined;
    const route = routeEvent(request.method, request.routeOptions.url ?? '');
    if (!route) return undefined;
    const value = eventValue(request, route.kind);
    let filters: AuthFilters | undefined;
    try {
      filters = await authorize(auth, request, route.event, value);
    } catch (err) {
      if (err instanceof AuthRefused) return sendRefusal(reply, err);
      throw err;
    }
    const body = request.body as Body | undefined;
    // Owner stamping: the metadata the handler left is the metadata written.
    if ((route.kind === 'create' || route.kind === 'create_run' || route.event.endsWith(':update')) && body && typeof body === 'object')
      body.metadata = value.metadata ?? {};
    if (request.routeOptions.url === '/threads/:thread_id/copy') return copyCheck(d, request, reply, filters);
    if (!filters) return undefined;
    // Crons do not carry their owner's filter yet: refused rather than shown to every user of the tenant.
    if (route.kind === 'cron')
      throw new ApiError(
        403,
        'forbidden',
        `The ${route.event} handler returned a filter, which Runledger cannot apply to crons yet: crons are refused under it.`,
      );
    filtersByRequest.set(request, filters);
    const params = (request.params ?? {}) as { thread_id?: string; run_id?: string; assistant_id?: string };
    if (route.kind === 'search') {
      const merged = containmentOf(body?.metadata ?? undefined, filters);
      if (merged === null) return reply.send(request.routeOptions.url?.endsWith('/count') ? 0 : []);
      if (body) body.metadata = merged;
      else request.body = { metadata: merged };
      return undefined;
    }
    let threadId = params.thread_id;
    if (route.kind === 'run' && params.run_id) {
      const job = await d.ledger.get(params.run_id, tenantScope(request)).catch(() => undefined);
      if (!job) throw notFound('Run', params.run_id);
      threadId = job.threadId;
    }
    if (STREAM_JOINS.has(request.routeOptions.url ?? '')) return undefined;
    if (threadId !== undefined && (route.kind === 'thread' || route.kind === 'run' || route.kind === 'create_run')) {
      const thread = await d.threads.get(threadId, tenantScope(request));
      if (thread && !matchesFilters(thread.metadata, filters)) throw notFound('Thread', threadId);
    }
    if (route.kind === 'assistant' && params.assistant_id) {
      const assistant = await d.assistants.get(admissionTenant(request), params.assistant_id);
      if (!matchesFilters(assistant.metadata, filters)) throw notFound('Assistant', params.assistant_id);
    }
    return undefined;
  };
}

/**
 * Why a join of `threadId`'s run is refused under the request's filter, as LangGraph's server
 * refuses it: in the stream, with an `error` event (the HTTP answer is 200). Undefined when the
 * filter matches the thread, or there is none.
 */
export async function joinRefusal(d: LangGraphDeps, request: FastifyRequest, threadId: string): Promise<{ error: string; message: string } | undefined> {
  const filters = filtersByRequest.get(request);
  if (!filters) return undefined;
  const thread = await d.threads.get(threadId, tenantScope(request));
  // As the hook's check of other thread routes: a thread without a record has no metadata to hide it by.
  if (!thread || matchesFilters(thread.metadata, filters)) return undefined;
  return { error: 'Error', message: `404: Thread ${threadId} not found` };
}
