import { type Cron, type CronFiring, Crons, shortestCronInterval } from '@runledger/ledger';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ApiError } from '../http-errors';
import type { RouteDeps } from '../options';
import { CronBody, CronDetail, CronIdParams, CronList, CronListQuery, CronPatchBody, CronView, ErrorBody, type SubmitBody } from '../schemas';
import { admissionTenant, tenantScope } from '../security';
import { admissionRequest } from './admission';

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
  reason: f.reason,
  recordedAt: f.recordedAt.toISOString(),
});

/**
 * /v1/crons: cron definitions in PostgreSQL, fired by every producer's CronTicker through the
 * ledger. A cron is checked as POST /v1/jobs checks the admission each firing makes (the same
 * function: unknown graph or input 422, oversized metadata or a reserved thread id 400); a
 * bad expression or time zone answers 400 invalid_request, a schedule firing more often than
 * CRON_MIN_INTERVAL_MS 422 schedule_too_frequent, a tenant at CRON_MAX_PER_TENANT crons 429
 * limit_reached. Nothing is written then. A tenant sees only its own crons.
 */
export async function cronRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  const { maxPerTenant, minIntervalMs } = deps.cronLimits;
  const crons = new Crons(deps.ledger, { maxPerTenant });
  const params = (p: unknown) => (p as z.infer<typeof CronIdParams>).cronId;

  /** The admission checks of POST /v1/jobs, for the admission every firing of the cron makes. */
  const checkFiring = (request: FastifyRequest, firing: Pick<SubmitBody, 'graph' | 'input' | 'threadId' | 'metadata'>) =>
    admissionRequest(request, deps, firing, undefined);

  const checkInterval = (schedule: string, timezone: string) => {
    const shortest = shortestCronInterval(schedule, timezone, new Date());
    if (shortest < minIntervalMs) {
      throw new ApiError(
        422,
        'schedule_too_frequent',
        `"${schedule}" fires ${shortest / 1000} s apart at its shortest; the minimum interval is ${minIntervalMs / 1000} s (CRON_MIN_INTERVAL_MS).`,
      );
    }
  };

  app.post(
    '/v1/crons',
    {
      schema: {
        summary: 'Create a cron',
        tags: ['crons'],
        body: CronBody,
        response: { 201: CronView, 400: ErrorBody, 422: ErrorBody, 429: ErrorBody, 503: ErrorBody },
      },
    },
    async (request, reply) => {
      const body = request.body as CronBody;
      checkFiring(request, body);
      checkInterval(body.schedule, body.timezone ?? 'UTC');
      const cron = await crons.create({ ...body, tenant: admissionTenant(request) });
      return reply.code(201).send(cronView(cron));
    },
  );

  app.get(
    '/v1/crons',
    {
      schema: { summary: 'List crons, oldest first', tags: ['crons'], querystring: CronListQuery, response: { 200: CronList, 400: ErrorBody, 503: ErrorBody } },
    },
    async (request) => {
      const q = request.query as z.infer<typeof CronListQuery>;
      const page = await crons.list(tenantScope(request), { limit: q.limit ?? 50, cursor: q.cursor });
      return { crons: page.crons.map(cronView), nextCursor: page.nextCursor };
    },
  );

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
      const current = await crons.get(id, tenant);
      if (patch.input !== undefined) {
        checkFiring(request, { graph: current.graph, input: patch.input, threadId: current.threadId ?? undefined, metadata: current.metadata });
      }
      if (patch.schedule !== undefined || patch.timezone !== undefined) checkInterval(patch.schedule ?? current.schedule, patch.timezone ?? current.timezone);
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
