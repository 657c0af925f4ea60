import type { Job } from '@runledger/ledger';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { z } from 'zod';
import { deliverWithin, handOffWithin } from '../delivery';
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
  const { ledger, queue, enqueueTimeoutMs } = deps;

  const detail = async (job: Job, extra: { enqueued?: boolean } = {}) => ({ ...jobDetail(job, await ledger.effects(job.jobId)), ...extra });

  // resume and replay put the job back to `accepted`: deliver it now (the reconciler covers a failure).
  const redeliver = async (job: Job, log: FastifyBaseLogger) => {
    const enqueued = await deliverWithin(queue, ledger, job, enqueueTimeoutMs, log);
    return detail(enqueued ? await ledger.get(job.jobId) : job, { enqueued });
  };

  // cancel and resolve end the job: its thread may have a next job waiting for it.
  const handOff = async (job: Job, log: FastifyBaseLogger) => {
    await handOffWithin(queue, ledger, job, enqueueTimeoutMs, log);
    return detail(job);
  };

  type Handler = (jobId: string, body: never, log: FastifyBaseLogger, tenant: string | undefined) => Promise<unknown>;
  const route = (action: string, summary: string, body: z.ZodType, handler: Handler) =>
    app.post(`/v1/jobs/:jobId/${action}`, { schema: { summary, tags: ['actions'], params: JobIdParams, body, response: responses } }, async (request) =>
      handler((request.params as z.infer<typeof JobIdParams>).jobId, request.body as never, request.log, tenantScope(request)),
    );

  route(
    'cancel',
    'Cancel a job that has not finished; a running attempt loses its lease',
    CancelBody,
    async (jobId, body: z.infer<typeof CancelBody>, log, tenant) => handOff(await ledger.cancel(jobId, tenant, body?.note), log),
  );

  route('resume', 'Continue an interrupted job with a value for interrupt()', ResumeBody, async (jobId, body: z.infer<typeof ResumeBody>, log, tenant) =>
    redeliver(await ledger.resume(jobId, body.resume, tenant), log),
  );

  route(
    'replay',
    'manual_reconcile → accepted: run again after a person checked; effects in doubt are called again with the same key',
    ReplayBody,
    async (jobId, body: z.infer<typeof ReplayBody>, log, tenant) => redeliver(await ledger.replay(jobId, tenant, body?.note), log),
  );

  route(
    'upgrade',
    'Move a waiting or parked job to another version of its graph (recorded as `upgraded`); 409 when that version cannot resume its checkpoints and no replay was asked',
    UpgradeBody,
    async (jobId, body: z.infer<typeof UpgradeBody>, log, tenant) => {
      const now = await upgradeJob(ledger, jobId, { to: body.to, replay: body.replay, note: body.note }, tenant, 'send replay: true');
      return now.status === 'interrupted' ? detail(now) : redeliver(now, log);
    },
  );

  route('resolve', 'manual_reconcile → completed or failed, recorded by a person', ResolveBody, async (jobId, body: z.infer<typeof ResolveBody>, log, tenant) =>
    handOff(await ledger.resolve(jobId, body.outcome, body.note, tenant), log),
  );
}
