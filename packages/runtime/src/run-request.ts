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
  };
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
