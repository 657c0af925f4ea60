import { type Cron, type CronFiring, Crons } from '@runledger/ledger';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ApiError } from '../http-errors';
import type { RouteDeps } from '../options';
import { CronBody, CronDetail, CronIdParams, CronList, CronPatchBody, CronView, ErrorBody } from '../schemas';
import { admissionTenant, checkMetadataSize, tenantScope } from '../security';

export function cronView(c: Cron): z.infer<typeof CronView> {
  return {
    cronId: c.cronId,
    graph: c.graph,
    schedule: c.schedule,
    timezone: c.timezone,
    input: c.input,
    threadId: c.threadId,
    metadata: c.metadata,
    missed: c.missed,
    enabled: c.enabled,
    nextFireAt: c.nextFireAt.toISOString(),
    createdAt: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
  };
}

const firingView = (f: CronFiring) => ({
  scheduledAt: f.scheduledAt.toISOString(),
  outcome: f.outcome,
  jobId: f.jobId,
  recordedAt: f.recordedAt.toISOString(),
});

/**
 * /v1/crons: cron definitions in PostgreSQL, fired by every producer's CronTicker through the
 * ledger. A bad expression or time zone answers 400 invalid_request, an unknown graph or input
 * 422; nothing is written then. A tenant sees only its own crons.
 */
export async function cronRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  const crons = new Crons(deps.ledger);
  const params = (p: unknown) => (p as z.infer<typeof CronIdParams>).cronId;

  const checkGraph = (graph: string, input: unknown) => {
    const def = deps.graphs.get(graph);
    if (!def) throw new ApiError(422, 'unknown_graph', `No graph named "${graph}"; known graphs: ${[...deps.graphs.keys()].join(', ')}.`);
    const problem = def.validateInput?.(input);
    if (problem) throw new ApiError(422, 'invalid_input', problem);
  };

  app.post(
    '/v1/crons',
    { schema: { summary: 'Create a cron', tags: ['crons'], body: CronBody, response: { 201: CronView, 400: ErrorBody, 422: ErrorBody, 503: ErrorBody } } },
    async (request, reply) => {
      const body = request.body as CronBody;
      checkGraph(body.graph, body.input);
      checkMetadataSize(request, body.metadata);
      const cron = await crons.create({ ...body, tenant: admissionTenant(request) });
      return reply.code(201).send(cronView(cron));
    },
  );

  app.get('/v1/crons', { schema: { summary: 'List crons', tags: ['crons'], response: { 200: CronList, 503: ErrorBody } } }, async (request) => ({
    crons: (await crons.list(tenantScope(request))).map(cronView),
  }));

  app.get(
    '/v1/crons/:cronId',
    {
      schema: {
        summary: 'A cron with its latest firings',
        tags: ['crons'],
        params: CronIdParams,
        response: { 200: CronDetail, 404: ErrorBody, 503: ErrorBody },
      },
    },
    async (request) => {
      const cron = await crons.get(params(request.params), tenantScope(request));
      return { ...cronView(cron), firings: (await crons.firings(cron.cronId)).map(firingView) };
    },
  );

  app.patch(
    '/v1/crons/:cronId',
    {
      schema: {
        summary: 'Change a cron (schedule, timezone, input, missed, enabled)',
        tags: ['crons'],
        params: CronIdParams,
        body: CronPatchBody,
        response: { 200: CronView, 400: ErrorBody, 404: ErrorBody, 422: ErrorBody, 503: ErrorBody },
      },
    },
    async (request) => {
      const id = params(request.params);
      const patch = request.body as CronPatchBody;
      const tenant = tenantScope(request);
      if (patch.input !== undefined) checkGraph((await crons.get(id, tenant)).graph, patch.input);
      return cronView(await crons.update(id, patch, tenant));
    },
  );

  app.delete(
    '/v1/crons/:cronId',
    {
      schema: { summary: 'Delete a cron (its jobs stay)', tags: ['crons'], params: CronIdParams, response: { 204: z.null(), 404: ErrorBody, 503: ErrorBody } },
    },
    async (request, reply) => {
      await crons.remove(params(request.params), tenantScope(request));
      return reply.code(204).send();
    },
  );
}
