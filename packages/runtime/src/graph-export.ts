import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import { FactoryGraph } from './factory-graph';
import type { GraphEntry } from './langgraph-config';
import { messageChannels, messagesProblem } from './message-input';
import type { GraphDefinition, InputCheckOptions, RunnableGraph } from './registry';

/**
 * A compiled graph as LangGraph builds it (`CompiledStateGraph`, a Pregel): what Runledger
 * touches of it. `withConfig` returns a copy, so each attempt gets its own checkpointer while
 * the module's instance stays as the user exported it.
 */
interface CompiledLike extends RunnableGraph {
  builder: StateGraphLike;
  checkpointer?: unknown;
  withConfig(config: Record<string, unknown>): CompiledLike;
}

/** An uncompiled `StateGraph` (or anything with LangGraph's `compile({ checkpointer })`). */
interface StateGraphLike {
  compile(options: { checkpointer: BaseCheckpointSaver }): CompiledLike;
  /** LangGraph internals, read only to derive an input check (see inputCheck). */
  _inputDefinition?: unknown;
  _inputRuntimeDefinition?: unknown;
  _schemaRuntimeDefinition?: unknown;
}

type Factory = (config: Record<string, unknown>) => unknown;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
const isCompiled = (v: unknown): v is CompiledLike =>
  isObject(v) && isObject(v.builder) && typeof v.invoke === 'function' && typeof v.getState === 'function' && typeof v.withConfig === 'function';
const isUncompiled = (v: unknown): v is StateGraphLike => isObject(v) && typeof v.compile === 'function';

/** LangChain's `createAgent` returns a wrapper whose compiled graph is `.graph`. */
function unwrap(v: unknown): unknown {
  return isObject(v) && isCompiled(v.graph) ? v.graph : v;
}

/** Says, once per graph, that the export's own checkpointer (e.g. a MemorySaver) is not used. */
export type Notice = (message: string) => void;

function withSaver(graph: CompiledLike | StateGraphLike, saver: BaseCheckpointSaver, replaced: () => void): RunnableGraph {
  if (!isCompiled(graph)) return graph.compile({ checkpointer: saver });
  if (graph.checkpointer !== undefined && graph.checkpointer !== false) replaced();
  const copy = graph.withConfig({});
  copy.checkpointer = saver;
  return copy;
}

function notGraph(entry: GraphEntry, value: unknown, what = 'export'): Error {
  const got =
    value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value === 'object' ? `an object without compile() or invoke()` : typeof value;
  return new Error(
    `langgraph.json graph "${entry.id}" (${entry.spec}): ${what} "${entry.exportName}" is not a graph: ` +
      `expected a compiled graph, a StateGraph, or a function returning one (got ${got}).`,
  );
}

/**
 * The GraphDefinition of one langgraph.json entry whose module export is `value`: a compiled
 * graph, an uncompiled StateGraph, a promise of either, or a factory (sync or async) that takes
 * the run's config and returns either. Whatever checkpointer the export brought, every build
 * runs on the one Runledger hands it (the attempt's fenced saver). Throws one line naming the
 * entry when `value` is none of these.
 */
export async function definitionFromExport(entry: GraphEntry, exported: unknown, notice: Notice): Promise<GraphDefinition> {
  const value = unwrap(await exported);
  let told = false;
  const replaced = () => {
    if (told) return;
    told = true;
    notice(`graph "${entry.id}" (${entry.spec}) was compiled with its own checkpointer; Runledger runs it on its fenced PostgreSQL checkpointer instead.`);
  };
  const description = entry.description ?? `${entry.spec} (langgraph.json)`;
  const source = { file: entry.file, exportName: entry.exportName };
  if (isCompiled(value) || isUncompiled(value)) {
    const builder = isCompiled(value) ? value.builder : value;
    return { name: entry.id, description, source, validateInput: inputCheck(entry.id, builder), build: (saver) => withSaver(value, saver, replaced) };
  }
  if (typeof value !== 'function') throw notGraph(entry, value);
  const factory = value as Factory;
  const resolve = async (config: Record<string, unknown>): Promise<CompiledLike | StateGraphLike> => {
    const made = unwrap(await factory(config));
    if (!isCompiled(made) && !isUncompiled(made)) throw notGraph(entry, made, 'the value returned by factory');
    return made;
  };
  return {
    name: entry.id,
    description,
    source,
    // The graph exists only once the factory ran with a run's config: nothing to derive a schema from.
    validateInput: (input) => (isPlainObject(input) ? undefined : `${entry.id} input: must be a JSON object`),
    // The factory runs for each call (run, stream, state read or update), with that call's config, as in `langgraph dev`.
    build: (saver) => new FactoryGraph(async (config) => withSaver(await resolve(config), saver, replaced)),
  };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return isObject(v) && !Array.isArray(v);
}

/** A zod object (v3 or v4): what LangGraph accepts as a state schema besides Annotation. */
interface ZodObjectLike {
  partial(): ZodObjectLike;
  safeParse(v: unknown): { success: boolean; error?: { issues: Array<{ path: PropertyKey[]; message: string }> } };
}
const isZodObject = (v: unknown): v is ZodObjectLike => isObject(v) && typeof v.safeParse === 'function' && typeof v.partial === 'function';

/**
 * The input check a StateGraph allows: a JSON object whose fields are the graph's input
 * channels (Annotation or zod state), and, for a zod state, values that pass the schema (every
 * field optional, as an input is a partial update; an explicit `input` schema is used as is).
 * A messages channel's value must be messages LangChain can coerce (messagesProblem). Unknown
 * fields are refused unless `ignoreUnknownFields` (then LangGraph drops them, as it does).
 */
export function inputCheck(id: string, builder: StateGraphLike): (input: unknown, options?: InputCheckOptions) => string | undefined {
  const definition = isObject(builder._inputDefinition) ? builder._inputDefinition : {};
  const channels = Object.keys(definition);
  const messages = messageChannels(definition);
  const own = builder._inputRuntimeDefinition;
  const state = builder._schemaRuntimeDefinition;
  const schema = isZodObject(own) ? own : isZodObject(state) ? state.partial() : undefined;
  return (input, options = {}) => {
    if (!isPlainObject(input)) return `${id} input: must be a JSON object with the graph's input fields (${channels.join(', ')})`;
    const unknown = options.ignoreUnknownFields ? [] : Object.keys(input).filter((k) => !channels.includes(k));
    if (channels.length > 0 && unknown.length > 0) {
      return `${id} input: unknown field(s) ${unknown.join(', ')}; the graph's input fields are ${channels.join(', ')}`;
    }
    for (const name of messages) {
      const problem = name in input ? messagesProblem(name, input[name]) : undefined;
      if (problem) return `${id} input: ${problem}`;
    }
    const result = schema?.safeParse(input);
    if (!result || result.success) return undefined;
    const issues = (result.error?.issues ?? []).map((i) => `${i.path.map(String).join('.') || '(input)'}: ${i.message}`);
    return `${id} input: ${issues.join('; ')}`;
  };
}
