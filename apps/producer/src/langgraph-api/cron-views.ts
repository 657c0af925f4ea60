import type { Cron } from '@runledger/ledger';
import { RUN_REQUEST_KEY, type RunRequest, STREAM_REQUEST_KEY } from '@runledger/runtime';
import { ASSISTANT_KEY } from './assistants';
import type { CRON_FIELDS } from './cron-schemas';

/** A LangGraph API cron's stored metadata split: the caller's own, and what every firing's job carries for Runledger. */
export function splitCronMetadata(cron: Cron) {
  const { [ASSISTANT_KEY]: assistant, [RUN_REQUEST_KEY]: run, [STREAM_REQUEST_KEY]: stream, ...metadata } = cron.metadata;
  return {
    metadata,
    assistant: assistant as { assistant_id: string; version: number } | undefined,
    run: run as RunRequest | undefined,
    stream: stream as { modes: string[]; subgraphs: boolean } | undefined,
  };
}

/** The next time a cron fires, null when it is off or past its end_time. */
function nextRunDate(cron: Cron): string | null {
  if (!cron.enabled || (cron.endTime && cron.nextFireAt.getTime() > cron.endTime.getTime())) return null;
  return cron.nextFireAt.toISOString();
}

/**
 * The LangGraph API's Cron object of a cron. `payload` is the run each firing creates: its input,
 * metadata, breakpoints and stream modes as sent, its config and context as merged when the cron
 * was created or updated (LANGGRAPH_CONFIG < the assistant's version then < the cron's), and its
 * multitask strategy (a firing on a busy thread waits its turn: enqueue). A thread-less cron keeps
 * each firing's thread (`on_run_completed: keep`); no user identity beside the tenant: `user_id` null.
 */
export function cronView(cron: Cron) {
  const { metadata, run, stream } = splitCronMetadata(cron);
  const assistantId = cron.assistantId as string;
  return {
    cron_id: cron.cronId,
    assistant_id: assistantId,
    thread_id: cron.threadId,
    on_run_completed: cron.threadId === null ? 'keep' : null,
    end_time: cron.endTime?.toISOString() ?? null,
    schedule: cron.schedule,
    timezone: cron.timezone,
    created_at: cron.createdAt.toISOString(),
    updated_at: cron.updatedAt.toISOString(),
    payload: {
      assistant_id: assistantId,
      input: cron.input,
      metadata,
      config: run?.config ?? {},
      context: run?.context ?? {},
      interrupt_before: run?.interruptBefore ?? null,
      interrupt_after: run?.interruptAfter ?? null,
      stream_mode: stream?.modes ?? [],
      stream_subgraphs: stream?.subgraphs ?? false,
      multitask_strategy: 'enqueue',
    },
    user_id: null,
    next_run_date: nextRunDate(cron),
    metadata,
    enabled: cron.enabled,
  };
}

export type CronView = ReturnType<typeof cronView>;

/** The view with only the `select`ed fields (all without a select), as LangGraph's search answers it. */
export function selected(view: CronView, select: ReadonlyArray<(typeof CRON_FIELDS)[number]> | undefined): Partial<CronView> {
  if (!select?.length) return view;
  return Object.fromEntries(select.map((f) => [f, view[f]]));
}
