import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { InvalidTransitionError, isTerminal, type Job, type LangGraphThread } from '@runledger/ledger';
import { type GotoTarget, type GraphDefinition, RUN_REQUEST_KEY, type RunRequest, runRequestOf, STREAM_REQUEST_KEY, type StreamMode } from '@runledger/runtime';
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { deliverWithin } from '../delivery';
import { ApiError } from '../http-errors';
import { storedRunConfig } from '../run-config';
import { scheduledRunAt } from '../schedule';
import { ErrorBody } from '../schemas';
import { type AuthContext, admissionTenant, authUserOf, checkMetadataSize, tenantScope } from '../security';
import { checkWebhook } from '../webhooks/admission';
import { ASSISTANT_KEY, type RunAssistant } from './assistants';
import { cancelRun } from './cancel';
import type { LangGraphDeps } from './context';
import { closeParkedRuns, forkRequest, hasState } from './run-branching';
import { tagThread } from './run-thread';
import { type RunCreate, UNSUPPORTED_RUN_FIELDS } from './schemas';

/** A created (or resumed) run and where its stream starts for the client that created it. */
export interface CreatedRun {
  job: Job;
  /** Stream chunks after this id (-1: all) belong to this request (a resumed run keeps its earlier chunks). */
  streamAfter: number;
}

/**
 * The documented answers of a run on a new thread (POST /runs, /runs/wait, /runs/stream): its
 * 200 (a run, final values or a stream; written as the route writes it), and 422 for
 * on_completion "delete", which Runledger cannot honour yet, and for a webhook not allowed.
 */
export const THREADLESS_REFUSALS = { 200: z.unknown(), 422: ErrorBody };

const unsupported = (what: string) => new ApiError(422, 'unsupported', `${what} is not supported by Runledger yet.`);

/** The caller's thread of that id, or 404 unless the request may create it (`if_not_exists: create`). Writes nothing. */
async function findThread(d: LangGraphDeps, request: FastifyRequest, threadId: string, body: RunCreate): Promise<LangGraphThread | undefined> {
  const found = await d.threads.get(threadId, tenantScope(request));
  if (!found && body.if_not_exists !== 'create')
    throw new ApiError(404, 'not_found', `Thread ${threadId} does not exist (send if_not_exists: "create" to create it).`);
  return found;
}

/**
 * Creates the thread a run goes to: a new one (thread-less run) or the named one. Under custom
 * auth it carries the run's metadata, as LangGraph's server writes it (the owner a handler stamped).
 */
async function createThread(d: LangGraphDeps, request: FastifyRequest, threadId: string | undefined, body: RunCreate): Promise<LangGraphThread> {
  const metadata = authUserOf(request) ? { ...body.metadata } : {};
  const created = await d.threads.create(threadId ?? randomUUID(), admissionTenant(request), metadata);
  // Not created: this tenant made a thread of that id meanwhile (threads are per tenant).
  const now = created ?? (threadId === undefined ? undefined : await d.threads.get(threadId, admissionTenant(request)));
  if (!now) throw new ApiError(503, 'retry', 'A new thread id collided; retry the request.');
  return now;
}

/** Cancels every job of the thread that has not finished (multitask `interrupt`), or rolls it back (`rollback`). */
async function cancelOpenRuns(d: LangGraphDeps, request: FastifyRequest, threadId: string, rollback: boolean): Promise<void> {
  const { jobs } = await d.ledger.list({ threadId, tenant: tenantScope(request), limit: 500 });
  const note = `${rollback ? 'rolled back' : 'interrupted'} by a new run (multitask_strategy ${rollback ? 'rollback' : 'interrupt'})`;
  // Newest first: a rollback removes the later runs' checkpoints before the earlier ones'.
  for (const job of jobs) {
    if (isTerminal(job.status)) continue;
    await cancelRun(d, request, job.jobId, note, rollback).catch((err: unknown) => {
      // Finished in the meantime: nothing left to interrupt.
      if (!(err instanceof InvalidTransitionError)) throw err;
    });
  }
}

/** The stream request to store on the job: asked for by a streaming call (default `values`) or by `stream_mode`. */
export function streamRequest(body: RunCreate, streaming: boolean): { modes: StreamMode[]; subgraphs: boolean } | undefined {
  const asked = body.stream_mode === undefined ? [] : [body.stream_mode].flat();
  if (!streaming && asked.length === 0) return undefined;
  return { modes: asked.length ? asked : ['values'], subgraphs: body.stream_subgraphs === true };
}

/**
 * The run request to store on the job (Command update/goto, breakpoints, config and context), its
 * goto targets checked; undefined when none. Config and context: LANGGRAPH_CONFIG's < the
 * assistant's (the version the run is pinned to) < the run's.
 */
export function runRequest(d: LangGraphDeps, graph: GraphDefinition, body: RunCreate, assistant: RunAssistant): RunRequest | undefined {
  const c = body.command ?? undefined;
  const goto = c?.goto === undefined ? undefined : ([c.goto].flat() as GotoTarget[]);
  const command = c && (c.update !== undefined || goto?.length) ? { update: c.update, goto } : undefined;
  const before = body.interrupt_before;
  const after = body.interrupt_after;
  // Breakpoints are not checked, as on LangGraph's server: a name that is no node of the graph
  // never matches (it may name a node of a subgraph, whose own breakpoints apply there).
  const nodes = d.assistants.nodeNames(graph);
  const unknown = (goto ?? []).map((g) => (typeof g === 'string' ? g : g.node)).filter((n) => !nodes.has(n));
  if (unknown.length)
    throw new ApiError(
      422,
      'invalid_request',
      `Graph "${graph.name}" has no node ${unknown.map((n) => `"${n}"`).join(', ')}; its nodes: ${[...nodes].join(', ')}.`,
    );
  // As on LangGraph's server, the run's metadata is also the graph's config.metadata.
  const config = body.metadata ? { ...body.config, metadata: { ...(body.config?.metadata as object | undefined), ...body.metadata } } : body.config;
  const layer = { config: assistant.config, context: Object.keys(assistant.context).length ? assistant.context : undefined };
  const run = storedRunConfig(d.graphConfig, graph.name, layer, { config: config ?? undefined, context: body.context ?? undefined });
  if (!command && !before && !after && !run) return undefined;
  return { command, interruptBefore: before, interruptAfter: after, ...run };
}

/**
 * The custom-auth user in the run's stored config, as LangGraph's server sets it:
 * `configurable.langgraph_auth_user`, `langgraph_auth_user_id`, `langgraph_auth_permissions`.
 * Stored with the job, so every attempt, recovery and resume on any worker sees the same user.
 */
function withAuthUser(run: RunRequest | undefined, auth: AuthContext | undefined): RunRequest | undefined {
  if (!auth) return run;
  const configurable = {
    ...run?.config?.configurable,
    langgraph_auth_user: auth.user,
    langgraph_auth_user_id: auth.user.identity,
    langgraph_auth_permissions: auth.scopes,
  };
  return { ...run, config: { ...run?.config, configurable }, context: run?.context ?? {} };
}

/**
 * Refuses (422) a `command.resume` whose config or context differs from the interrupted job's:
 * the resumed run is that job, and it keeps the config it started with at every attempt.
 */
async function sameConfigAsStored(d: LangGraphDeps, request: FastifyRequest, jobId: string, asked: RunRequest | undefined): Promise<void> {
  const stored = runRequestOf((await d.ledger.get(jobId, tenantScope(request))).metadata);
  const config = (r: RunRequest | undefined) => ({ config: r?.config ?? {}, context: r?.context ?? {} });
  if (isDeepStrictEqual(config(stored), config(asked))) return;
  throw new ApiError(
    422,
    'invalid_config',
    'body.config and body.context apply to a new run: command.resume continues the interrupted run with the config it started with (send the same, or none).',
  );
}

/**
 * Checks a run request and admits it as a job through the producer's admitter (ledger commit,
 * then queue), or continues the thread's interrupted job for `command: { resume }` (the ledger's
 * resume, then a delivery). Everything is checked before anything is written.
 */
export async function createRun(
  d: LangGraphDeps,
  request: FastifyRequest,
  threadId: string | undefined,
  body: RunCreate,
  streaming: boolean,
): Promise<CreatedRun> {
  const raw = body as Record<string, unknown>;
  for (const field of UNSUPPORTED_RUN_FIELDS) if (raw[field] !== undefined && raw[field] !== null) throw unsupported(`body.${field}`);
  // Deleting the thread when the run ends would need the worker to do it (a producer may be gone by then).
  if (body.on_completion === 'delete' && threadId === undefined) throw unsupported('body.on_completion "delete" (send "keep")');
  const command = body.command ?? undefined;
  const webhook = checkWebhook(d.webhooks, body.webhook, 'body.webhook');
  // The run is pinned to the assistant's current version; assistant.config and assistant.context
  // are the assistant layer of the run's config (defaults < assistant < run).
  const { graph, assistant } = await d.assistants.forRun(admissionTenant(request), body.assistant_id);
  const resuming = command !== undefined && 'resume' in command;
  if (command && body.input !== undefined && body.input !== null)
    throw new ApiError(422, 'invalid_request', 'Send either input or command, not both: a command run starts from the thread state.');
  if (resuming && body.after_seconds) throw new ApiError(422, 'invalid_request', 'after_seconds applies to a new run, not to command.resume.');
  if (resuming && webhook) throw new ApiError(422, 'invalid_webhook', 'body.webhook applies to a new run: command.resume continues the run with its own.');
  checkMetadataSize(request, body.metadata);
  // Another tenant's thread answers 404 like a missing one, before anything else is said about it.
  const existing = threadId === undefined ? undefined : await findThread(d, request, threadId, body);
  const checkpoint = await forkRequest(d, graph, existing, threadId, body);
  const asked = runRequest(d, graph, body, assistant);
  const run = withAuthUser(checkpoint ? { ...asked, checkpoint } : asked, authUserOf(request));
  // A command run starts from the thread's state, not from an input; so does a run without input
  // on a thread (or a checkpoint) that has state: it continues from there, as LangGraph's does.
  const continues = (body.input ?? null) === null && (checkpoint !== undefined || (await hasState(d, graph, existing)));
  if (!command && !continues) {
    // As LangGraph's server: fields the graph has no channel for are dropped, not refused.
    const problem = graph.validateInput?.(body.input ?? null, { ignoreUnknownFields: true });
    if (problem) throw new ApiError(422, 'invalid_input', problem);
  }
  const thread = existing ?? (await createThread(d, request, threadId, body));

  if (resuming) {
    const latest = thread.latestJob;
    if (latest?.status !== 'interrupted')
      throw new ApiError(409, 'invalid_state', `Thread ${thread.threadId} is not interrupted; command.resume continues an interrupted thread.`);
    const streamAfter = await d.streams.lastId(latest.jobId);
    if (body.config || body.context !== undefined) await sameConfigAsStored(d, request, latest.jobId, run);
    if (body.interrupt_before || body.interrupt_after)
      throw new ApiError(
        422,
        'invalid_request',
        'interrupt_before and interrupt_after apply to a new run, not to command.resume (the resumed run keeps its own).',
      );
    const job = await d.ledger.resume(latest.jobId, command.resume, tenantScope(request), { update: run?.command?.update, goto: run?.command?.goto });
    await tagThread(d, thread, graph, body.assistant_id);
    await deliverWithin(d.queue, d.ledger, job, d.enqueueTimeoutMs, request.log);
    return { job, streamAfter };
  }

  // interrupt: the thread's unfinished runs (a parked one included) are cancelled, keeping what
  // they checkpointed; the new run then goes first. Their stale writes are refused by the fence.
  // rollback: the same, and their checkpoints and stream logs go too (the runs are deleted).
  const strategy = body.multitask_strategy;
  if (strategy === 'interrupt' || strategy === 'rollback') await cancelOpenRuns(d, request, thread.threadId, strategy === 'rollback');
  else if (existing) await closeParkedRuns(d, request, thread.threadId, strategy !== 'enqueue');
  const stream = streamRequest(body, streaming);
  const pinned = { [ASSISTANT_KEY]: { assistant_id: assistant.assistantId, version: assistant.version } };
  const metadata = { ...body.metadata, ...pinned, ...(stream ? { [STREAM_REQUEST_KEY]: stream } : {}), ...(run ? { [RUN_REQUEST_KEY]: run } : {}) };
  const { job } = await d.admitter.admit(
    {
      graph: graph.name,
      graphVersion: graph.version,
      input: body.input ?? null,
      threadId: thread.threadId,
      runAt: body.after_seconds ? scheduledRunAt({ delayMs: body.after_seconds * 1000 }) : undefined,
      metadata,
      webhook,
      // The reference server's default is reject: a busy thread answers 409.
      multitask: strategy === 'enqueue' || strategy === 'interrupt' || strategy === 'rollback' ? 'enqueue' : 'reject',
      tenant: admissionTenant(request),
    },
    request.log,
  );
  await tagThread(d, thread, graph, body.assistant_id);
  return { job, streamAfter: -1 };
}
