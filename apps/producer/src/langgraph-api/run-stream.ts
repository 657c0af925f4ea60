import type { Job } from '@runledger/ledger';
import { type StreamMode, streamRequestOf } from '@runledger/runtime';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { ApiError } from '../http-errors';
import { admissionTenant, tenantScope } from '../security';
import { joinRefusal } from './auth-hook';
import { cancelRun, isDeleted } from './cancel';
import { type LangGraphDeps, runPath } from './context';
import { createRun, THREADLESS_REFUSALS } from './run-admission';
import { finalValues } from './run-views';
import { JoinStreamQuery, RunCreate, RunIdParams, RunParams, ThreadParams } from './schemas';
import { isSettled, runError } from './status';

// In /openapi.json under the `langgraph` tag, from the same schemas that validate the requests.
const doc = { tags: ['langgraph'] };
/** `: ping` comment lines on a stream, so clients and proxies see it alive. */
export const HEARTBEAT_MS = 2_000;

interface SseMessage {
  id?: string;
  event: string;
  data: unknown;
}

/** The events a join asked for by stream mode; run-level events (metadata, error) always pass. */
function modeFilter(modes: StreamMode[] | undefined): (event: string) => boolean {
  if (!modes?.length) return () => true;
  const names = new Set<string>(['metadata', 'error']);
  for (const m of modes) {
    if (m === 'messages-tuple') names.add('messages');
    else if (m === 'messages') for (const e of ['messages/metadata', 'messages/partial', 'messages/complete']) names.add(e);
    else names.add(m);
  }
  return (event) => names.has(event.split('|')[0] ?? event);
}

/**
 * A run's SSE events from its stream log after `afterId`, then (through the run's shared tail)
 * until the run settles, then `error` for a failed run (or one waiting for manual
 * reconciliation); the stream then ends, with no event of its own, as the reference server's.
 * A run nobody asked to stream at admission (or whose log expired) has no log: it gets
 * `metadata` and, at the end, its final values, all without ids. Ends early when `signal` aborts.
 */
async function* runEvents(d: LangGraphDeps, job: Job, afterId: number, signal: AbortSignal): AsyncGenerator<SseMessage> {
  // A finished run whose log retention removed is served like one that was never logged.
  const logged = streamRequestOf(job.metadata) !== undefined && (!isSettled(job.status) || (await d.streams.lastId(job.jobId)) >= 0);
  if (!logged) yield { event: 'metadata', data: { run_id: job.jobId, attempt: job.attempt } };
  const chunks = d.tails.follow(job.jobId, afterId, signal);
  let step = await chunks.next();
  for (; !step.done; step = await chunks.next()) yield { id: String(step.value.id), event: step.value.event, data: step.value.data };
  const settled = step.value;
  if (!settled) return;
  if (!logged && settled.status === 'completed') yield { event: 'values', data: await finalValues(d, settled) };
  const error = runError(settled);
  if (!error) return;
  if (!logged) {
    yield { event: 'error', data: error };
    return;
  }
  // The id after the log's last (an event without one repeats the last id in SSE clients): the
  // run has settled, so no chunk takes it; a reconnect after it gets nothing more.
  const lastId = await d.streams.lastId(job.jobId);
  if (afterId <= lastId) yield { id: String(lastId + 1), event: 'error', data: error };
}

/** The id to replay after: `Last-Event-ID` (-1 = from the start, the first chunk being 0); absent = from the start, the log being durable. */
function lastEventIdOf(request: FastifyRequest): number {
  const raw = request.headers['last-event-id'];
  if (raw === undefined || raw === '' || raw === '-1') return -1;
  if (typeof raw !== 'string' || !/^\d{1,18}$/.test(raw))
    throw new ApiError(400, 'invalid_request', 'Last-Event-ID must be an event id from this stream, or -1 for the start.');
  return Number(raw);
}

interface ServeOptions {
  /** Only these stream modes' events (a join's `stream_mode`); default all. */
  modes?: StreamMode[];
  /** Cancel the run when the client goes away before it settles (`on_disconnect: cancel`, `cancel_on_disconnect`). */
  cancelOnDisconnect?: boolean;
}

async function serve(d: LangGraphDeps, request: FastifyRequest, reply: FastifyReply, job: Job, afterId: number, options: ServeOptions = {}): Promise<void> {
  const path = runPath(job.threadId, job.jobId);
  reply.header('content-location', path);
  // Where the SDK reconnects (with Last-Event-ID) when the connection drops mid-run.
  reply.header('location', `${path}/stream`);
  const gone = new AbortController();
  reply.sse.onClose(() => gone.abort());
  // Headers now, and a `: ping` comment line every HEARTBEAT_MS from here, also while the run
  // waits in the queue. A comment line alone, not followed by a blank line: a blank line would
  // end an empty event, which SDK 2.0 hands to the caller as an event named "".
  reply.sse.sendHeaders();
  const ping = setInterval(() => {
    if (!gone.signal.aborted) reply.raw.write(': ping\n');
  }, HEARTBEAT_MS);
  const wanted = modeFilter(options.modes);
  const events = runEvents(d, job, afterId, gone.signal);
  try {
    await reply.sse.send(
      (async function* () {
        for await (const e of events) if (wanted(e.event)) yield e;
      })(),
    );
  } finally {
    clearInterval(ping);
  }
  if (gone.signal.aborted && options.cancelOnDisconnect) {
    const current = await d.ledger.get(job.jobId, tenantScope(request));
    if (!isSettled(current.status)) await cancelRun(d, request, job.jobId, 'the streaming client disconnected (on_disconnect: cancel)');
  }
}

/** SSE: create a run and stream it (on a thread or a new one), and join a run's stream. */
export async function runStreamRoutes(app: FastifyInstance, d: LangGraphDeps): Promise<void> {
  const createAndStream = async (request: FastifyRequest, reply: FastifyReply, threadId: string | undefined) => {
    const body = request.body as RunCreate;
    d.openStreams.hold(admissionTenant(request), reply);
    const { job, streamAfter } = await createRun(d, request, threadId, body, true);
    await serve(d, request, reply, job, streamAfter, { cancelOnDisconnect: body.on_disconnect === 'cancel' });
  };
  const sse = { kind: 'manual' as const };
  app.post(
    '/threads/:thread_id/runs/stream',
    { sse, schema: { ...doc, summary: 'Create a run and stream it (SSE)', params: ThreadParams, body: RunCreate } },
    (rq, rp) => createAndStream(rq, rp, (rq.params as z.infer<typeof ThreadParams>).thread_id),
  );
  app.post(
    '/runs/stream',
    { sse, schema: { ...doc, summary: 'Create a run on a new thread and stream it (SSE)', body: RunCreate, response: THREADLESS_REFUSALS } },
    (rq, rp) => createAndStream(rq, rp, undefined),
  );
  const join = async (request: FastifyRequest, reply: FastifyReply) => {
    const { thread_id, run_id } = request.params as Partial<z.infer<typeof RunParams>> & { run_id: string };
    const afterId = lastEventIdOf(request);
    const job = await d.ledger.get(run_id, tenantScope(request));
    if ((thread_id !== undefined && job.threadId !== thread_id) || isDeleted(job))
      throw new ApiError(404, 'not_found', `Run ${run_id} is not on thread ${thread_id}.`);
    const q = request.query as z.infer<typeof JoinStreamQuery>;
    d.openStreams.hold(admissionTenant(request), reply);
    const refusal = await joinRefusal(d, request, job.threadId);
    if (refusal) {
      await reply.sse.send({ event: 'error', data: refusal });
      return;
    }
    await serve(d, request, reply, job, afterId, { modes: q.stream_mode, cancelOnDisconnect: q.cancel_on_disconnect === true });
  };
  app.get(
    '/threads/:thread_id/runs/:run_id/stream',
    { sse, schema: { ...doc, summary: "Join a run's stream (SSE), replaying after Last-Event-ID", params: RunParams, querystring: JoinStreamQuery } },
    join,
  );
  // The SDK's joinStream without a thread id (a thread-less run's id is enough).
  app.get(
    '/runs/:run_id/stream',
    { sse, schema: { ...doc, summary: "Join a run's stream by its id alone (SSE)", params: RunIdParams, querystring: JoinStreamQuery } },
    join,
  );
}
