import { type Cron, Crons, LedgerError } from '@runledger/ledger';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ApiError } from '../http-errors';
import { ErrorBody } from '../schemas';
import { tenantScope } from '../security';
import { assistantIdOf } from './assistants';
import type { LangGraphDeps } from './context';
import { cronPatch, newCron } from './cron-admission';
import { CronCount, CronCreate, CronIdParams, CronSearch, CronUpdate } from './cron-schemas';
import { cronView, selected } from './cron-views';
import { ThreadParams } from './schemas';

const doc = { tags: ['langgraph'] };

// The documented answers: 400 a malformed body, 404 an unknown assistant, thread or cron, 422 a
// bad schedule, input or config or a field Runledger cannot honour, 429 CRON_MAX_PER_TENANT.
const CREATED = { 200: z.unknown(), 400: ErrorBody, 404: ErrorBody, 422: ErrorBody, 429: ErrorBody };
const READ = { 200: z.unknown(), 400: ErrorBody, 422: ErrorBody };

/** A cron search by metadata: the stored metadata is sealed when encryption is on, so it cannot be matched in SQL. */
function refuseMetadataFilter(body: { metadata?: Record<string, unknown> }): void {
  if (body.metadata && Object.keys(body.metadata).length)
    throw new ApiError(422, 'unsupported', 'body.metadata (a cron search or count by metadata) is not supported by Runledger yet.');
}

/**
 * The LangGraph API's crons (/runs/crons) on the ledger's crons: a cron created here is a row of
 * `crons` (listed by /v1/crons too) fired by every producer's CronTicker like any other, once per
 * scheduled time (key cron id + time). Each firing is a run of the assistant's graph with the
 * metadata, config and context a run created through /runs would carry; a thread cron's firings
 * are runs of its thread, a thread-less cron's each a run on a new thread (kept). The /v1 cron
 * limits apply (CRON_MAX_PER_TENANT 429, CRON_MIN_INTERVAL_MS 422). Per tenant.
 */
export async function cronRoutes(app: FastifyInstance, d: LangGraphDeps): Promise<void> {
  const crons = new Crons(d.ledger, { maxPerTenant: d.cronLimits.maxPerTenant });

  /** The caller's LangGraph API cron; 404 for a missing one, another tenant's, or a /v1 cron (it has no assistant). */
  const cronOf = async (request: FastifyRequest): Promise<Cron> => {
    const { cron_id } = request.params as { cron_id: string };
    const cron = await crons.get(cron_id, tenantScope(request)).catch((err: unknown) => {
      if (err instanceof LedgerError && err.code === 'NOT_FOUND') return undefined;
      throw err;
    });
    if (!cron || cron.assistantId === null) throw new ApiError(404, 'not_found', `Cron ${cron_id} not found.`);
    return cron;
  };

  /** A graph id names its default assistant, as everywhere in the API. */
  const assistantFilter = (id: string | undefined) => (id !== undefined && d.graphs.has(id) ? assistantIdOf(id) : id);

  const create = (onThread: boolean) => async (request: FastifyRequest, reply: FastifyReply) => {
    const threadId = onThread ? (request.params as { thread_id: string }).thread_id : undefined;
    const cron = await crons.create(await newCron(d, request, threadId, request.body as CronCreate));
    return reply.send(cronView(cron));
  };

  app.post(
    '/runs/crons',
    { schema: { ...doc, summary: 'Create a cron: each firing a run on a new thread', body: CronCreate, response: CREATED } },
    create(false),
  );
  app.post(
    '/threads/:thread_id/runs/crons',
    { schema: { ...doc, summary: 'Create a cron: each firing a run of this thread', params: ThreadParams, body: CronCreate, response: CREATED } },
    create(true),
  );

  app.patch(
    '/runs/crons/:cron_id',
    { schema: { ...doc, summary: 'Update a cron', params: CronIdParams, body: CronUpdate, response: CREATED } },
    async (request) => {
      const current = await cronOf(request);
      const patch = await cronPatch(d, request, current, (request.body ?? {}) as CronUpdate);
      return cronView(await crons.update(current.cronId, patch, tenantScope(request)));
    },
  );

  app.delete(
    '/runs/crons/:cron_id',
    { schema: { ...doc, summary: 'Delete a cron (its runs stay)', params: CronIdParams, response: { 204: z.null(), 404: ErrorBody } } },
    async (request, reply) => {
      const cron = await cronOf(request);
      await crons.remove(cron.cronId, tenantScope(request));
      return reply.code(204).send();
    },
  );

  app.post('/runs/crons/search', { schema: { ...doc, summary: 'Search crons (default newest first)', body: CronSearch, response: READ } }, async (request) => {
    const q = (request.body ?? {}) as CronSearch;
    refuseMetadataFilter(q);
    const found = await crons.search({
      tenant: tenantScope(request),
      assistantId: assistantFilter(q.assistant_id),
      threadId: q.thread_id,
      enabled: q.enabled,
      assistantsOnly: true,
      limit: q.limit ?? 10,
      offset: q.offset,
      sortBy: q.sort_by,
      sortOrder: q.sort_order,
    });
    return found.map((c) => selected(cronView(c), q.select));
  });

  app.post('/runs/crons/count', { schema: { ...doc, summary: 'Count crons', body: CronCount, response: READ } }, async (request) => {
    const q = (request.body ?? {}) as CronCount;
    refuseMetadataFilter(q);
    return crons.count({
      tenant: tenantScope(request),
      assistantId: assistantFilter(q.assistant_id),
      threadId: q.thread_id,
      enabled: q.enabled,
      assistantsOnly: true,
    });
  });
}
