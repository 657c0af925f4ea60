import { type Cron, LedgerError, type NewCron, shortestCronInterval } from '@runledger/ledger';
import { type GraphDefinition, RUN_REQUEST_KEY, STREAM_REQUEST_KEY } from '@runledger/runtime';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../http-errors';
import { admissionTenant, checkMetadataSize, tenantScope } from '../security';
import { ASSISTANT_KEY, type RunAssistant } from './assistants';
import type { LangGraphDeps } from './context';
import type { CronCreate, CronUpdate } from './cron-schemas';
import { splitCronMetadata } from './cron-views';
import { runRequest, streamRequest } from './run-admission';
import type { RunCreate } from './schemas';

const unsupported = (field: string, why: string) => new ApiError(422, 'unsupported', `body.${field} is not supported on crons by Runledger yet: ${why}.`);

/** Fields of a cron Runledger cannot honour: 422 naming the field (null, as the SDK may send, is no request). */
function refuseUnsupported(body: Record<string, unknown>, threadless: boolean): void {
  for (const field of ['checkpoint_id', 'checkpoint', 'command', 'after_seconds'])
    if (body[field] !== undefined && body[field] !== null) throw unsupported(field, 'a firing starts a new run from the input (or the thread state)');
  if (body.webhook !== undefined && body.webhook !== null) throw unsupported('webhook', 'firings are not announced to a webhook');
  const strategy = body.multitask_strategy;
  if (strategy !== undefined && strategy !== null && strategy !== 'enqueue')
    throw unsupported('multitask_strategy', `a firing on a busy thread waits its turn (send "enqueue"), "${String(strategy)}" is not honoured`);
  if (body.if_not_exists === 'create') throw unsupported('if_not_exists "create"', 'a cron names a thread that exists (create it first)');
  if (threadless && body.on_run_completed === 'delete') throw unsupported('on_run_completed "delete"', 'each firing\'s thread is kept (send "keep")');
}

/** A 5- or 6-field cron expression (UTC unless `timezone`) at most as frequent as CRON_MIN_INTERVAL_MS; 422 otherwise. */
export function checkSchedule(schedule: string, timezone: string, minIntervalMs: number): void {
  let shortest: number;
  try {
    shortest = shortestCronInterval(schedule, timezone, new Date());
  } catch (err) {
    if (err instanceof LedgerError) throw new ApiError(422, 'invalid_schedule', err.message);
    throw err;
  }
  if (shortest < minIntervalMs)
    throw new ApiError(
      422,
      'schedule_too_frequent',
      `"${schedule}" fires ${shortest / 1000} s apart at its shortest; the minimum interval is ${minIntervalMs / 1000} s (CRON_MIN_INTERVAL_MS).`,
    );
}

/** What a firing is asked to run, beside its input. */
type RunFields = Pick<RunCreate, 'metadata' | 'config' | 'context' | 'interrupt_before' | 'interrupt_after' | 'stream_mode' | 'stream_subgraphs'>;

/**
 * The metadata every firing's job carries: the caller's, the assistant version it is pinned to,
 * the run request (breakpoints; config and context merged as a run's: defaults < assistant < cron)
 * and the stream request, as a run created through /runs carries them.
 */
function firingMetadata(d: LangGraphDeps, graph: GraphDefinition, assistant: RunAssistant, run: RunFields): Record<string, unknown> {
  const body = { ...run, assistant_id: assistant.assistantId } as RunCreate;
  const asked = runRequest(d, graph, body, assistant);
  const stream = streamRequest(body, false);
  return {
    ...run.metadata,
    [ASSISTANT_KEY]: { assistant_id: assistant.assistantId, version: assistant.version },
    ...(stream ? { [STREAM_REQUEST_KEY]: stream } : {}),
    ...(asked ? { [RUN_REQUEST_KEY]: asked } : {}),
  };
}

/** 422 for an input the graph refuses (fields it has no channel for are dropped, as for a run). */
function checkInput(graph: GraphDefinition, input: unknown): void {
  const problem = graph.validateInput?.(input ?? null, { ignoreUnknownFields: true });
  if (problem) throw new ApiError(422, 'invalid_input', problem);
}

/**
 * The ledger cron of POST /runs/crons (thread-less: each firing on a new thread) or
 * /threads/:thread_id/runs/crons (each firing a run of that thread). Everything is checked first:
 * unknown assistant or thread 404, bad schedule, input, config or unsupported field 422.
 */
export async function newCron(d: LangGraphDeps, request: FastifyRequest, threadId: string | undefined, body: CronCreate): Promise<NewCron> {
  refuseUnsupported(body, threadId === undefined);
  const timezone = body.timezone ?? 'UTC';
  checkSchedule(body.schedule, timezone, d.cronLimits.minIntervalMs);
  const tenant = admissionTenant(request);
  const { graph, assistant } = await d.assistants.forRun(tenant, body.assistant_id);
  if (threadId !== undefined && !(await d.threads.get(threadId, tenantScope(request))))
    throw new ApiError(404, 'not_found', `Thread ${threadId} does not exist.`);
  checkMetadataSize(request, body.metadata);
  // On a thread, a firing without input continues from the thread's state (as a run does).
  if (threadId === undefined || (body.input ?? null) !== null) checkInput(graph, body.input);
  return {
    tenant,
    graph: graph.name,
    schedule: body.schedule,
    timezone,
    input: body.input ?? null,
    threadId: threadId ?? null,
    metadata: firingMetadata(d, graph, assistant, body),
    enabled: body.enabled ?? true,
    assistantId: assistant.assistantId,
    endTime: body.end_time ? new Date(body.end_time) : null,
  };
}

/**
 * The ledger patch of PATCH /runs/crons/:cron_id. A change to what a firing runs (metadata,
 * config, context, breakpoints, stream modes) is merged again over the assistant's current
 * version, the cron's other stored fields kept.
 */
export async function cronPatch(d: LangGraphDeps, request: FastifyRequest, current: Cron, body: CronUpdate) {
  refuseUnsupported(body, current.threadId === null);
  if (body.schedule !== undefined || body.timezone !== undefined)
    checkSchedule(body.schedule ?? current.schedule, body.timezone ?? current.timezone, d.cronLimits.minIntervalMs);
  const { graph, assistant } = await d.assistants.forRun(current.tenant, current.assistantId as string);
  if (body.input !== undefined && (current.threadId === null || body.input !== null)) checkInput(graph, body.input);
  checkMetadataSize(request, body.metadata);
  const runFields = ['metadata', 'config', 'context', 'interrupt_before', 'interrupt_after', 'stream_mode', 'stream_subgraphs'] as const;
  let metadata: Record<string, unknown> | undefined;
  if (runFields.some((f) => body[f] !== undefined)) {
    const was = splitCronMetadata(current);
    metadata = firingMetadata(d, graph, assistant, {
      metadata: body.metadata ?? was.metadata,
      config: body.config !== undefined ? body.config : (was.run?.config as RunCreate['config']),
      context: body.context !== undefined ? body.context : was.run?.context,
      interrupt_before: body.interrupt_before ?? was.run?.interruptBefore,
      interrupt_after: body.interrupt_after ?? was.run?.interruptAfter,
      stream_mode: body.stream_mode ?? (was.stream?.modes as RunCreate['stream_mode']),
      stream_subgraphs: body.stream_subgraphs ?? was.stream?.subgraphs,
    });
  }
  return {
    schedule: body.schedule,
    timezone: body.timezone,
    input: body.input,
    enabled: body.enabled,
    metadata,
    endTime: body.end_time === undefined ? undefined : body.end_time === null ? null : new Date(body.end_time),
  };
}
