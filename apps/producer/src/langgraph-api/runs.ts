import { Readable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { isTerminal } from '@runledger/ledger';
import { serializeChunk } from '@runledger/runtime';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { ApiError } from '../http-errors';
import { admissionTenant, tenantScope } from '../security';
import { cancelRun, isDeleted } from './cancel';
import { type LangGraphDeps, runPath } from './context';
import { createRun, THREADLESS_REFUSALS } from './run-admission';
import { finalValues, runView } from './run-views';
import { CancelQuery, RunCreate, RunIdParams, RunListQuery, RunParams, ThreadParams } from './schemas';
import { runStatus } from './status';

// In /openapi.json under the `langgraph` tag, from the same schemas that validate the requests.
const doc = { tags: ['langgraph'] };

/** The job of a run on a thread; 404 when missing, another tenant's, or on another thread. */
async function runOf(d: LangGraphDeps, request: FastifyRequest, threadId: string, runId: string) {
  const job = await d.ledger.get(runId, tenantScope(request));
  if (job.threadId !== threadId) throw new ApiError(404, 'not_found', `Run ${runId} is not on thread ${threadId}.`);
  if (isDeleted(job)) throw new ApiError(404, 'not_found', `Run ${runId} was deleted.`);
  return job;
}

/** A newline every this often while a wait or join is pending, so idle timeouts (ours, proxies') never cut it. */
const KEEPALIVE_MS = 1_000;

/**
 * The body of a wait or join: a newline every KEEPALIVE_MS until the run settles (as the run's
 * shared tail sees it), then its final values as JSON (JSON allows the leading whitespace; the
 * reference server does the same).
 */
async function* keptAlive(d: LangGraphDeps, runId: string): AsyncGenerator<string> {
  // Aborted when the client leaves: Readable.from returns this generator at its next newline.
  const gone = new AbortController();
  const settled = d.tails.settled(runId, gone.signal);
  try {
    for (;;) {
      const job = await Promise.race([settled, delay(KEEPALIVE_MS)]);
      if (job) {
        yield serializeChunk(await finalValues(d, job));
        return;
      }
      yield '\n';
    }
  } finally {
    gone.abort();
  }
}

/** Answers 200 with the run's final values once it settles; the client's disconnect ends the wait. */
function answerWhenSettled(d: LangGraphDeps, reply: FastifyReply, runId: string) {
  return reply.type('application/json; charset=utf-8').send(Readable.from(keptAlive(d, runId)));
}

/** Runs: create (background), wait, list, get, join, cancel; on a thread and thread-less. */
export async function runRoutes(app: FastifyInstance, d: LangGraphDeps): Promise<void> {
  const create = (threadId: string | undefined, wait: boolean) => async (request: FastifyRequest, reply: FastifyReply) => {
    if (wait) d.openStreams.hold(admissionTenant(request), reply);
    const { job } = await createRun(d, request, threadId ?? undefined, request.body as RunCreate, false);
    reply.header('content-location', runPath(job.threadId, job.jobId));
    return wait ? answerWhenSettled(d, reply, job.jobId) : reply.send(runView(job));
  };
  const onThread = (wait: boolean) => (request: FastifyRequest, reply: FastifyReply) =>
    create((request.params as z.infer<typeof ThreadParams>).thread_id, wait)(request, reply);

  const body = { ...doc, body: RunCreate };
  app.post('/threads/:thread_id/runs', { schema: { ...body, summary: 'Create a background run', params: ThreadParams } }, onThread(false));
  app.post(
    '/threads/:thread_id/runs/wait',
    { schema: { ...body, summary: 'Create a run and wait for its final values', params: ThreadParams } },
    onThread(true),
  );
  // A run on a new thread also answers 422 for on_completion "delete" (THREADLESS_REFUSALS).
  const threadless = { ...body, response: THREADLESS_REFUSALS };
  app.post('/runs', { schema: { ...threadless, summary: 'Create a background run on a new thread' } }, (rq, rp) => create(undefined, false)(rq, rp));
  app.post('/runs/wait', { schema: { ...threadless, summary: 'Create a run on a new thread and wait' } }, (rq, rp) => create(undefined, true)(rq, rp));

  app.get(
    '/threads/:thread_id/runs',
    { schema: { ...doc, summary: "A thread's runs, newest first (status: only those in it)", params: ThreadParams, querystring: RunListQuery } },
    async (request) => {
      const { thread_id } = request.params as z.infer<typeof ThreadParams>;
      const q = request.query as z.infer<typeof RunListQuery>;
      if (!(await d.threads.get(thread_id, tenantScope(request)))) throw new ApiError(404, 'not_found', `Thread ${thread_id} does not exist.`);
      const limit = q.limit ?? 10;
      const offset = q.offset ?? 0;
      const page = await d.ledger.list({ threadId: thread_id, tenant: tenantScope(request), limit: q.status ? 500 : Math.min(limit + offset, 500) });
      return page.jobs
        .filter((j) => !isDeleted(j) && (q.status === undefined || runStatus(j) === q.status))
        .slice(offset, offset + limit)
        .map(runView);
    },
  );

  app.get('/threads/:thread_id/runs/:run_id', { schema: { ...doc, summary: 'Read a run', params: RunParams } }, async (request) => {
    const { thread_id, run_id } = request.params as z.infer<typeof RunParams>;
    return runView(await runOf(d, request, thread_id, run_id));
  });

  app.get(
    '/threads/:thread_id/runs/:run_id/join',
    { schema: { ...doc, summary: "Wait for a run's final values", params: RunParams } },
    async (request, reply) => {
      const { thread_id, run_id } = request.params as z.infer<typeof RunParams>;
      await runOf(d, request, thread_id, run_id);
      d.openStreams.hold(admissionTenant(request), reply);
      return answerWhenSettled(d, reply, run_id);
    },
  );

  app.get(
    '/runs/:run_id/join',
    { schema: { ...doc, summary: "Wait for a run's final values, by its id alone", params: RunIdParams } },
    async (request, reply) => {
      const { run_id } = request.params as z.infer<typeof RunIdParams>;
      const job = await d.ledger.get(run_id, tenantScope(request));
      if (isDeleted(job)) throw new ApiError(404, 'not_found', `Run ${run_id} was deleted.`);
      d.openStreams.hold(admissionTenant(request), reply);
      return answerWhenSettled(d, reply, run_id);
    },
  );

  app.delete(
    '/threads/:thread_id/runs/:run_id',
    {
      schema: {
        ...doc,
        summary: "Delete a run with its checkpoints: an unfinished one is rolled back; a finished one's job stays in the ledger (/v1) as a receipt",
        params: RunParams,
      },
    },
    async (request, reply) => {
      const { thread_id, run_id } = request.params as z.infer<typeof RunParams>;
      const job = await runOf(d, request, thread_id, run_id);
      const note = 'deleted through the LangGraph API';
      // A finished run's effects may have reached a provider: its row and effects stay, only the LangGraph API forgets it.
      if (isTerminal(job.status)) await d.ledger.deleteFinished(run_id, tenantScope(request), note);
      else await cancelRun(d, request, run_id, note, true);
      return reply.code(204).send();
    },
  );

  app.post(
    '/threads/:thread_id/runs/:run_id/cancel',
    {
      schema: {
        ...doc,
        summary: 'Cancel a run (action interrupt), or delete it with its checkpoints (rollback); wait=1 answers once it stopped',
        params: RunParams,
        querystring: CancelQuery,
      },
    },
    async (request, reply) => {
      const { thread_id, run_id } = request.params as z.infer<typeof RunParams>;
      const q = request.query as z.infer<typeof CancelQuery>;
      await runOf(d, request, thread_id, run_id);
      const rollback = q.action === 'rollback';
      await cancelRun(d, request, run_id, rollback ? 'rolled back through the LangGraph API' : 'cancelled through the LangGraph API', rollback);
      return reply.code(q.wait === '1' || q.wait === 'true' ? 204 : 202).send();
    },
  );
}
