import { load } from '@langchain/core/load';
import type { Job } from '@runledger/ledger';
import { RUN_REQUEST_KEY, STREAM_REQUEST_KEY } from '@runledger/runtime';
import { ASSISTANT_KEY, assistantIdOf } from './assistants';
import type { LangGraphDeps } from './context';
import { runError, runStatus } from './status';
import { interruptsOf } from './thread-state';

/** The LangGraph API's Run object of a job (run id = job id). */
export function runView(job: Job) {
  const { [STREAM_REQUEST_KEY]: stream, [RUN_REQUEST_KEY]: run, [ASSISTANT_KEY]: assistant, ...metadata } = job.metadata ?? {};
  const asked = (run ?? {}) as { command?: unknown; interruptBefore?: unknown; interruptAfter?: unknown; config?: unknown; context?: unknown };
  return {
    run_id: job.jobId,
    thread_id: job.threadId,
    assistant_id: (assistant as { assistant_id?: string } | undefined)?.assistant_id ?? assistantIdOf(job.graph),
    status: runStatus(job),
    metadata,
    kwargs: {
      stream_mode: (stream as { modes?: string[] } | undefined)?.modes ?? [],
      command: asked.command ?? null,
      interrupt_before: asked.interruptBefore ?? null,
      interrupt_after: asked.interruptAfter ?? null,
      config: asked.config ?? {},
      context: asked.context ?? {},
    },
    multitask_strategy: null,
    attempt: job.attempt,
    created_at: job.acceptedAt.toISOString(),
    updated_at: job.updatedAt.toISOString(),
  };
}

/**
 * What `wait` and `join` answer for a settled run: its final values; `{ __error__ }` for a run
 * that failed or waits for manual reconciliation; for an interrupted or cancelled run the
 * thread's values, with `__interrupt__` listing pending interrupts.
 */
export async function finalValues(d: LangGraphDeps, job: Job): Promise<unknown> {
  const error = runError(job);
  if (error) return { __error__: error };
  // The ledger keeps a result as JSON (messages in LangChain's constructor form): revive them, so
  // the reply serializer writes them as the reference server does ({ ...fields, type }).
  if (job.status === 'completed') return load(JSON.stringify(job.result ?? {}));
  const graph = d.graphs.get(job.graph);
  if (!graph) return {};
  const state = await d.states.state(graph, job);
  const { all } = interruptsOf(state);
  return all.length ? { ...state.values, __interrupt__: all } : (state.values ?? {});
}
