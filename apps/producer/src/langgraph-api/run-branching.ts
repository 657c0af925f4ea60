import { isTerminal, type LangGraphThread } from '@runledger/ledger';
import type { GraphDefinition, RunRequest } from '@runledger/runtime';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../http-errors';
import { tenantScope } from '../security';
import { cancelRun } from './cancel';
import type { LangGraphDeps } from './context';
import type { RunCreate } from './schemas';

const invalid = (message: string) => new ApiError(422, 'invalid_request', message);

/**
 * The checkpoint a run asks to start from (`checkpoint_id`, or `checkpoint: { checkpoint_id }` as
 * useStream sends it): the run forks the thread there, as LangGraph's server runs it with that
 * checkpoint in its config. 404 unless the thread has that checkpoint; a subgraph's checkpoint
 * (`checkpoint_ns`, `checkpoint_map`) answers 422. Reads only.
 */
export async function forkRequest(
  d: LangGraphDeps,
  graph: GraphDefinition,
  thread: LangGraphThread | undefined,
  threadId: string | undefined,
  body: RunCreate,
): Promise<RunRequest['checkpoint']> {
  const c = body.checkpoint ?? undefined;
  const id = body.checkpoint_id ?? c?.checkpoint_id ?? undefined;
  if (body.checkpoint_id && c?.checkpoint_id && body.checkpoint_id !== c.checkpoint_id)
    throw invalid('body.checkpoint_id and body.checkpoint.checkpoint_id name different checkpoints.');
  if (c?.checkpoint_ns) throw new ApiError(422, 'unsupported', 'body.checkpoint.checkpoint_ns (a subgraph checkpoint) is not supported by Runledger yet.');
  if (c?.checkpoint_map && Object.keys(c.checkpoint_map).length)
    throw new ApiError(422, 'unsupported', 'body.checkpoint.checkpoint_map (a subgraph checkpoint) is not supported by Runledger yet.');
  // No checkpoint named (useStream sends the head's reference without one): the thread's latest.
  if (!id) return undefined;
  if (c?.thread_id && c.thread_id !== threadId) throw invalid(`body.checkpoint.thread_id is not the run's thread (${threadId ?? 'a new thread'}).`);
  if (body.command && 'resume' in body.command) {
    // useStream names the branch head it shows; the thread's head is where a resume goes anyway.
    const head = thread && (await d.states.state(graph, thread)).config?.configurable?.checkpoint_id;
    if (head === id) return undefined;
    throw invalid(
      'command.resume continues the interrupted run where it stopped, at the thread head; send checkpoint_id with input or a command update instead.',
    );
  }
  if (!thread || !(await d.states.at(graph, thread, id))) throw new ApiError(404, 'not_found', `Thread ${threadId ?? '(new)'} has no checkpoint ${id}.`);
  return { checkpointId: id, checkpointNs: '' };
}

/** Whether the thread has a checkpoint a run without input continues from. */
export async function hasState(d: LangGraphDeps, graph: GraphDefinition, thread: LangGraphThread | undefined): Promise<boolean> {
  return thread !== undefined && (await d.states.state(graph, thread)).metadata !== undefined;
}

/**
 * Ends the thread's parked (interrupted) runs before a new run on it, as LangGraph runs a new
 * input on an interrupted thread instead of refusing it: the parked run stays `interrupted`
 * (cancelled in the ledger) and the new run goes on from the thread's checkpoints. Left alone when
 * another run is pending or running and the strategy rejects: the admission then answers 409, and
 * nothing changed.
 */
export async function closeParkedRuns(d: LangGraphDeps, request: FastifyRequest, threadId: string, rejects: boolean): Promise<void> {
  const { jobs } = await d.ledger.list({ threadId, tenant: tenantScope(request), limit: 500 });
  const open = jobs.filter((j) => !isTerminal(j.status));
  const parked = open.filter((j) => j.status === 'interrupted');
  if (!parked.length || (rejects && parked.length < open.length)) return;
  for (const job of parked) await cancelRun(d, request, job.jobId, 'superseded by a new run on the interrupted thread');
}
