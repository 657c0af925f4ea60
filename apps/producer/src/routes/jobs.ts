import { type JobStatus, WebhookOutbox } from '@runledger/ledger';
import type { FastifyInstance } from 'fastify';
import type { z } from 'zod';
import { ApiError } from '../http-errors';
import type { RouteDeps } from '../options';
import { Admission, ErrorBody, EventList, JobDetail, JobIdParams, JobList, ListQuery, SubmitBody, SubmitHeaders } from '../schemas';
import { tenantScope } from '../security';
import { admissionView, eventView, jobDetail, jobView, webhookView } from '../views';
import { admissionRequest } from './admission';

const errors = { 400: ErrorBody, 404: ErrorBody, 409: ErrorBody, 413: ErrorBody, 415: ErrorBody, 422: ErrorBody, 503: ErrorBody };

/** POST /v1/jobs (admission) and the read routes of jobs. */
export async function jobRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  const { ledger, admitter } = deps;
  const outbox = new WebhookOutbox(ledger);

  app.post(
    '/v1/jobs',
    {
      schema: {
        summary: 'Submit a job',
        description:
          'Commits the admission to the ledger, then queues a reference to it. 202 for a new job, 200 when the idempotency key already names the same request.',
        tags: ['jobs'],
        body: SubmitBody,
        headers: SubmitHeaders,
        response: { 200: Admission, 202: Admission, ...errors },
      },
    },
    async (request, reply) => {
      const body = request.body as SubmitBody;
      const headerKey = request.headers['idempotency-key'] as string | undefined;
      if (body.idempotencyKey && headerKey && body.idempotencyKey !== headerKey) {
        throw new ApiError(400, 'invalid_request', 'body.idempotencyKey and the Idempotency-Key header differ; send one of them.');
      }
      const admission = admissionRequest(request, deps, body, body.idempotencyKey ?? headerKey);
      const { job, created, enqueued } = await admitter.admit(admission, request.log);
      const warning = job.status === 'accepted' ? deps.served.warning(job.graph, job.graphVersion) : undefined;
      return reply.code(created ? 202 : 200).send(admissionView(job, enqueued, warning));
    },
  );

  app.get(
    '/v1/jobs/:jobId',
    { schema: { summary: 'Read a job with its effects', tags: ['jobs'], params: JobIdParams, response: { 200: JobDetail, ...errors } } },
    async (request) => {
      const { jobId } = request.params as z.infer<typeof JobIdParams>;
      // Another tenant's job answers 404 like a missing one: get is scoped, and fails first.
      const [job, effects, webhook] = await Promise.all([ledger.get(jobId, tenantScope(request)), ledger.effects(jobId), outbox.ofJob(jobId)]);
      return { ...jobDetail(job, effects), webhook: webhookView(webhook) };
    },
  );

  app.get(
    '/v1/jobs',
    { schema: { summary: 'List jobs, newest first', tags: ['jobs'], querystring: ListQuery, response: { 200: JobList, ...errors } } },
    async (request) => {
      const q = request.query as z.infer<typeof ListQuery>;
      const page = await ledger.list({ ...q, status: q.status as JobStatus | undefined, tenant: tenantScope(request) });
      return { jobs: page.jobs.map(jobView), nextCursor: page.nextCursor };
    },
  );

  app.get(
    '/v1/jobs/:jobId/events',
    { schema: { summary: "A job's timeline, oldest first", tags: ['jobs'], params: JobIdParams, response: { 200: EventList, ...errors } } },
    async (request) => {
      const { jobId } = request.params as z.infer<typeof JobIdParams>;
      // The scoped get answers 404 for a missing job and for another tenant's.
      const [, events] = await Promise.all([ledger.get(jobId, tenantScope(request)), ledger.events(jobId)]);
      return { events: events.map(eventView) };
    },
  );
}
