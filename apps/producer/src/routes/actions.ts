import type { ActionResult as Acted } from '@runledger/queue';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { z } from 'zod';
import { actionsFor } from '../delivery';
import { upgradeJob } from '../job-upgrade';
import type { RouteDeps } from '../options';
import { ActionResult, CancelBody, ErrorBody, JobIdParams, ReplayBody, ResolveBody, ResumeBody, UpgradeBody } from '../schemas';
import { tenantScope } from '../security';
import { jobDetail } from '../views';

const responses = { 200: ActionResult, 400: ErrorBody, 404: ErrorBody, 409: ErrorBody, 415: ErrorBody, 503: ErrorBody };

/**
 * The operator actions: cancel, resume, replay, resolve. 409 invalid_state when the job's state
 * forbids one; 404 for another tenant's job (only the admin key acts across tenants).
 */
export async function actionRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  const { ledger } = deps;

  const detail = async ({ job, enqueued }: Acted) => ({ ...jobDetail(job, await ledger.effects(job.jobId)), ...(enqueued === undefined ? {} : { enqueued }) });

  type Handler = (jobId: string, body: never, log: FastifyBaseLogger, tenant: string | undefined) => Promise<unknown>;
  const route = (action: string, summary: string, body: z.ZodType, handler: Handler) =>
    app.post(`/v1/jobs/:jobId/${action}`, { schema: { summary, tags: ['actions'], params: JobIdParams, body, response: responses } }, async (request) =>
      handler((request.params as z.infer<typeof JobIdParams>).jobId, request.body as never, request.log, tenantScope(request)),
    );

  route(
    'cancel',
    'Cancel a job that has not finished; a running attempt loses its lease',
    CancelBody,
    async (jobId, body: z.infer<typeof CancelBody>, log, tenant) => detail(await actionsFor(deps, log).cancel(jobId, tenant, body?.note)),
  );

  route('resume', 'Continue an interrupted job with a value for interrupt()', ResumeBody, async (jobId, body: z.infer<typeof ResumeBody>, log, tenant) =>
    detail(await actionsFor(deps, log).resume(jobId, body.resume, tenant)),
  );

  route(
    'replay',
    'manual_reconcile → accepted: run again after a person checked; effects in doubt are called again with the same key',
    ReplayBody,
    async (jobId, body: z.infer<typeof ReplayBody>, log, tenant) => detail(await actionsFor(deps, log).replay(jobId, tenant, body?.note)),
  );

  route(
    'upgrade',
    'Move a waiting or parked job to another version of its graph (recorded as `upgraded`); 409 when that version cannot resume its checkpoints and no replay was asked',
    UpgradeBody,
    async (jobId, body: z.infer<typeof UpgradeBody>, log, tenant) => {
      const now = await upgradeJob(ledger, jobId, { to: body.to, replay: body.replay, note: body.note }, tenant, 'send replay: true');
      return detail(await actionsFor(deps, log).upgraded(now));
    },
  );

  route('resolve', 'manual_reconcile → completed or failed, recorded by a person', ResolveBody, async (jobId, body: z.infer<typeof ResolveBody>, log, tenant) =>
    detail(await actionsFor(deps, log).resolve(jobId, body.outcome, body.note, tenant)),
  );
}
