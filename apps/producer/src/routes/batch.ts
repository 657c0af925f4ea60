import type { AdmitRequest } from '@runledger/ledger';
import type { FastifyInstance } from 'fastify';
import { ApiError, toHttpError } from '../http-errors';
import { jsonBodyProblem } from '../json-body';
import type { RouteDeps } from '../options';
import { BatchAnswer, BatchBody, ErrorBody, MAX_BATCH_JOBS, SubmitBody } from '../schemas';
import { admissionView } from '../views';
import { describeZodIssues } from '../zod-compilers';
import { admissionRequest } from './admission';

type ItemAnswer = { status: number; body: unknown };

const refused = (err: ApiError): ItemAnswer => ({ status: err.statusCode, body: { error: { code: err.code, message: err.message } } });

/** POST /v1/jobs/batch: many admissions in one request, one answer each. */
export async function batchRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  const { admitter } = deps;

  app.post(
    '/v1/jobs/batch',
    {
      // The body parser leaves the jobs' own content to the loop below, so one bad job refuses only itself.
      config: { jsonItems: 'jobs' },
      schema: {
        summary: 'Submit many jobs at once',
        description: `Admits up to ${MAX_BATCH_JOBS} jobs in one request: the valid ones are committed to the ledger together (one statement) and queued with one addBulk. The request answers 200 with one result per job, in order, each holding the status and body POST /v1/jobs would answer for that job alone (202 new, 200 same idempotency key and request, 409 idempotency_conflict or thread_busy, 400 invalid_request, 422 unknown_graph or invalid_input). Nothing is written for a refused job, and it does not refuse the others. Give each job its own idempotencyKey to retry a batch safely. A malformed batch (no jobs array, more than ${MAX_BATCH_JOBS} jobs) answers 400 and writes nothing; a body over BODY_LIMIT_BYTES answers 413. 503 when PostgreSQL is unreachable: retry with the same keys.`,
        tags: ['jobs'],
        body: BatchBody,
        response: { 200: BatchAnswer, 400: ErrorBody, 413: ErrorBody, 415: ErrorBody, 503: ErrorBody },
      },
    },
    async (request) => {
      if (request.headers['idempotency-key'] !== undefined) {
        throw new ApiError(400, 'invalid_request', 'The Idempotency-Key header names one job; give each job of a batch its own idempotencyKey.');
      }
      const { jobs } = request.body as BatchBody;
      const answers: Array<ItemAnswer | undefined> = [];
      const admissions: AdmitRequest[] = [];
      const positions: number[] = [];
      jobs.forEach((item, i) => {
        try {
          const stored = jsonBodyProblem(item, `body.jobs[${i}]`);
          if (stored) throw new ApiError(400, 'invalid_request', stored);
          const parsed = SubmitBody.safeParse(item);
          if (!parsed.success) throw new ApiError(400, 'invalid_request', describeZodIssues(`body.jobs.${i}`, parsed.error.issues));
          admissions.push(admissionRequest(request, deps, parsed.data, parsed.data.idempotencyKey));
          positions.push(i);
          answers.push(undefined);
        } catch (err) {
          answers.push(refused(toHttpError(err)));
        }
      });
      const outcomes = admissions.length > 0 ? await admitter.admitMany(admissions, request.log) : [];
      outcomes.forEach((o, k) => {
        const i = positions[k]!;
        if (!('error' in o)) {
          const warning = o.job.status === 'accepted' ? deps.served.warning(o.job.graph, o.job.graphVersion) : undefined;
          answers[i] = { status: o.created ? 202 : 200, body: admissionView(o.job, o.enqueued, warning) };
          return;
        }
        const err = toHttpError(o.error);
        // An outage is not one job's fault: the whole request answers it, and a retry with the same keys is safe.
        if (err.statusCode >= 500) throw o.error;
        answers[i] = refused(err);
      });
      return { results: answers };
    },
  );
}
