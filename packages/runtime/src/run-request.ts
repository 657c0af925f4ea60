import { Command, Send } from '@langchain/langgraph';
import type { RunConfig } from './run-config';

/**
 * What a run asks of its graph beside its input: a `Command` to start with (`update`, `goto`),
 * static breakpoints (`interrupt_before`, `interrupt_after`), and its merged config and context
 * (mergeRunConfig). Stored in the job's metadata at admission (under RUN_REQUEST_KEY, like the
 * stream request; sealed with it) and read back by the worker at every attempt, so a recovered
 * or resumed attempt runs with the same breakpoints and config.
 */
export const RUN_REQUEST_KEY = 'runledger_run';

/** A node to go to, or a Send (`{ node, input }`) that runs a node with its own input. */
export type GotoTarget = string | { node: string; input: unknown };

export interface RunCommand {
  update?: unknown;
  goto?: GotoTarget[];
}

export interface RunRequest {
  /** Started as `Command({ update, goto })` instead of the input. */
  command?: RunCommand;
  /** Node names, or `*` for every node. */
  interruptBefore?: string[] | '*';
  interruptAfter?: string[] | '*';
  /** The run's config (LANGGRAPH_CONFIG < assistant < run), as stored at admission. */
  config?: RunConfig;
  /** The run's LangGraph v1 context, merged the same way. */
  context?: unknown;
  /**
   * The checkpoint a run starts from instead of the thread's latest (LangGraph API `checkpoint_id`):
   * a fork. Applied only while the job has no checkpoint of its own (start, replay); later
   * attempts resume from the newest checkpoint, which is then the fork's.
   */
  checkpoint?: { checkpointId: string; checkpointNs: string };
}

const breakpoints = (v: unknown): string[] | '*' | undefined =>
  v === '*' ? '*' : Array.isArray(v) && v.every((n) => typeof n === 'string') ? (v as string[]) : undefined;

/** The run request stored in a job's metadata, or undefined when the run asked for none. */
export function runRequestOf(metadata: Record<string, unknown> | null | undefined): RunRequest | undefined {
  const raw = metadata?.[RUN_REQUEST_KEY] as Record<string, unknown> | undefined;
  if (!raw || typeof raw !== 'object') return undefined;
  const command = raw.command as RunCommand | undefined;
  return {
    command: command && typeof command === 'object' ? command : undefined,
    interruptBefore: breakpoints(raw.interruptBefore),
    interruptAfter: breakpoints(raw.interruptAfter),
    config: raw.config && typeof raw.config === 'object' ? (raw.config as RunConfig) : undefined,
    context: raw.context ?? undefined,
    checkpoint: checkpointOf(raw.checkpoint),
  };
}

function checkpointOf(v: unknown): RunRequest['checkpoint'] {
  const c = v as { checkpointId?: unknown; checkpointNs?: unknown } | undefined;
  if (typeof c?.checkpointId !== 'string') return undefined;
  return { checkpointId: c.checkpointId, checkpointNs: typeof c.checkpointNs === 'string' ? c.checkpointNs : '' };
}

/** The `configurable` keys that start a run at its requested checkpoint (none when it asked for none). */
export function forkOf(r: RunRequest | undefined): { checkpoint_id?: string; checkpoint_ns?: string } {
  return r?.checkpoint ? { checkpoint_id: r.checkpoint.checkpointId, checkpoint_ns: r.checkpoint.checkpointNs } : {};
}

/** LangGraph's Command of a run command, with a resume value when one is given. */
export function commandOf(c: RunCommand, resume?: { value: unknown }): Command {
  const goto = c.goto?.map((g) => (typeof g === 'string' ? g : new Send(g.node, g.input)));
  return new Command({
    ...(c.update !== undefined ? { update: c.update as Record<string, unknown> } : {}),
    ...(goto?.length ? { goto } : {}),
    ...(resume ? { resume: resume.value } : {}),
  });
}

/** The invoke config's breakpoints of a run request (none when absent). */
export function breakpointsOf(r: RunRequest | undefined): { interruptBefore?: string[] | '*'; interruptAfter?: string[] | '*' } {
  return {
    ...(r?.interruptBefore ? { interruptBefore: r.interruptBefore } : {}),
    ...(r?.interruptAfter ? { interruptAfter: r.interruptAfter } : {}),
  };
}
