import { pathToFileURL } from 'node:url';
import type { StateSnapshot } from '@langchain/langgraph';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import { approvalGraph } from './graphs/approval';
import { chatGraph } from './graphs/chat';
import { echoGraph } from './graphs/echo';
import { vacationGraph } from './graphs/vacation';

/** The calls Runledger makes on a compiled graph (`stream` for runs a LangGraph API client streams). */
export interface RunnableGraph {
  invoke(input: unknown, config: Record<string, unknown>): Promise<unknown>;
  stream?(input: unknown, config: Record<string, unknown>): Promise<AsyncIterable<unknown>>;
  getState(config: { configurable: Record<string, unknown> }): Promise<StateSnapshot>;
}

/** A graph Runledger can run by name. */
export interface GraphDefinition {
  name: string;
  description: string;
  /** Compiles the graph with the attempt's (fenced) checkpointer. */
  build(checkpointer: BaseCheckpointSaver): RunnableGraph;
  /** A readable reason when `input` is unusable, undefined when it is fine. Checked at admission. */
  validateInput?(input: unknown): string | undefined;
}

export type GraphRegistry = ReadonlyMap<string, GraphDefinition>;

export const builtInGraphs: readonly GraphDefinition[] = [echoGraph, vacationGraph, approvalGraph, chatGraph];

/**
 * The built-in graphs plus those exported by the module at `modulePath` (RUNLEDGER_GRAPHS):
 * its default export or `graphs` export, an array of GraphDefinition. Throws a readable error
 * when the module cannot be loaded or exports something else.
 */
export async function loadGraphs(modulePath?: string): Promise<GraphRegistry> {
  const all = new Map(builtInGraphs.map((g) => [g.name, g]));
  if (!modulePath) return all;
  let mod: Record<string, unknown>;
  try {
    mod = await import(pathToFileURL(modulePath).href);
  } catch (err) {
    throw new Error(`RUNLEDGER_GRAPHS=${modulePath} could not be loaded: ${(err as Error).message}`, { cause: err });
  }
  const list = (mod.graphs ?? mod.default) as unknown;
  if (!Array.isArray(list) || !list.every((g) => typeof g?.name === 'string' && typeof g?.build === 'function')) {
    throw new Error(`RUNLEDGER_GRAPHS=${modulePath} must export \`graphs\` (or a default): an array of { name, description, build(checkpointer) }.`);
  }
  for (const g of list as GraphDefinition[]) all.set(g.name, g);
  return all;
}
