import { toJsonSchema } from '@langchain/core/utils/json_schema';
import { isZodSchemaV3, isZodSchemaV4 } from '@langchain/core/utils/types';
import { getConfigTypeSchema, getInputTypeSchema, getOutputTypeSchema, getUpdateTypeSchema } from '@langchain/langgraph/zod/schema';

type JsonSchema = Record<string, unknown>;

/** A graph's JSON schemas, as the LangGraph API's schemas answer names them (null: the graph tells none). */
export interface GraphSchemas {
  input: JsonSchema | null;
  output: JsonSchema | null;
  state: JsonSchema | null;
  config: JsonSchema | null;
}

/** What Runledger reads of a compiled graph to describe it: LangGraph's builder fields and its channels. */
export interface DescribedGraph {
  builder?: {
    _schemaRuntimeDefinition?: unknown;
    _inputRuntimeDefinition?: unknown;
    _outputRuntimeDefinition?: unknown;
    _configRuntimeSchema?: unknown;
    /** A StateGraph's input channels (its state's when it declares no input), by name. */
    _inputDefinition?: unknown;
    channels?: unknown;
  };
  inputChannels?: unknown;
  outputChannels?: unknown;
  streamChannelsAsIs?: unknown;
}

/** LangGraph's `StateSchema` (and what acts like it): it writes its own JSON schemas, with each value's jsonSchemaExtra. */
interface StateSchemaLike {
  getJsonSchema(): JsonSchema;
  getInputJsonSchema(): JsonSchema;
}
const isStateSchema = (v: unknown): v is StateSchemaLike =>
  typeof v === 'object' &&
  v !== null &&
  typeof (v as StateSchemaLike).getJsonSchema === 'function' &&
  typeof (v as StateSchemaLike).getInputJsonSchema === 'function';

/** LangGraph's marker of an input that is the state schema made partial. */
const PARTIAL_STATE = Symbol.for('langgraph.state.partial');

function fromStateSchema(b: NonNullable<DescribedGraph['builder']>): GraphSchemas | undefined {
  const { _schemaRuntimeDefinition: state, _inputRuntimeDefinition: input, _outputRuntimeDefinition: output } = b;
  if (!isStateSchema(state) && !isStateSchema(input) && !isStateSchema(output)) return undefined;
  const inputSchema = isStateSchema(input) ? input.getInputJsonSchema() : input === PARTIAL_STATE && isStateSchema(state) ? state.getInputJsonSchema() : null;
  return {
    state: isStateSchema(state) ? state.getJsonSchema() : null,
    input: inputSchema,
    output: isStateSchema(output) ? output.getJsonSchema() : null,
    config: null,
  };
}

/** A zod state through LangGraph's schema registry: with the jsonSchemaExtra `withLangGraph` gave its fields. */
function fromZodRegistry(g: DescribedGraph): GraphSchemas | undefined {
  let found: Record<'state' | 'input' | 'output' | 'config', unknown>;
  try {
    found = { state: getUpdateTypeSchema(g), input: getInputTypeSchema(g), output: getOutputTypeSchema(g), config: getConfigTypeSchema(g) };
  } catch {
    return undefined; // a schema the registry cannot convert: the fallbacks below describe it
  }
  if (Object.values(found).every((s) => s == null)) return undefined;
  const or = (s: unknown) => (s ?? null) as JsonSchema | null;
  return { state: or(found.state), input: or(found.input), output: or(found.output), config: or(found.config) };
}

/**
 * The names a graph's input may carry: a StateGraph's input channel is `__start__` (LangGraph
 * writes the input there and passes it on), so its input definition's (or state's) channels are read.
 */
function inputNames(g: DescribedGraph): unknown {
  if (g.inputChannels !== '__start__') return g.inputChannels;
  const fields = g.builder?._inputDefinition ?? g.builder?.channels;
  return typeof fields === 'object' && fields !== null ? Object.keys(fields) : g.inputChannels;
}

/**
 * A JSON schema of an object with a graph's channels as its properties (any type each): what a
 * compiled graph tells of its shape without a typed state schema; null when it names none.
 */
function channelSchema(channels: unknown): JsonSchema | null {
  const names = typeof channels === 'string' ? [channels] : Array.isArray(channels) ? channels.filter((c) => typeof c === 'string') : [];
  if (names.length === 0) return null;
  return { type: 'object', properties: Object.fromEntries(names.map((n) => [n, {}])) };
}

/** A zod schema as JSON schema; null for anything else, or a zod schema JSON schema cannot express (a transform, …). */
function zodSchema(v: unknown): JsonSchema | null {
  if (!isZodSchemaV4(v) && !isZodSchemaV3(v)) return null;
  try {
    return toJsonSchema(v) as JsonSchema;
  } catch {
    return null;
  }
}

/**
 * A compiled graph's schemas, found as LangGraph's server finds them at run time: a StateSchema's
 * own, else a zod state's through LangGraph's registry; each still missing from a zod schema
 * without the registry's extras, or (input, output, state) as an object of the graph's channels.
 * The TypeScript types of an Annotation state are not read here (type-schemas.ts reads them,
 * when typedAtRuntime says no schema is typed): its fields come out untyped.
 */
export function graphSchemas(g: DescribedGraph): GraphSchemas {
  const b = g.builder ?? {};
  const found = fromStateSchema(b) ?? fromZodRegistry(g);
  const state = found?.state ?? zodSchema(b._schemaRuntimeDefinition) ?? channelSchema(g.streamChannelsAsIs);
  return {
    state,
    input: found?.input ?? zodSchema(b._inputRuntimeDefinition) ?? channelSchema(inputNames(g)),
    output: found?.output ?? zodSchema(b._outputRuntimeDefinition) ?? channelSchema(g.outputChannels),
    config: found?.config ?? zodSchema(b._configRuntimeSchema),
  };
}

/**
 * Whether the graph's runtime objects type any of its schemas (a StateSchema, a zod state, input,
 * output or config): LangGraph's server reads a graph's TypeScript types only when none does.
 */
export function typedAtRuntime(g: DescribedGraph): boolean {
  const b = g.builder ?? {};
  if (fromStateSchema(b) ?? fromZodRegistry(g)) return true;
  return [b._schemaRuntimeDefinition, b._inputRuntimeDefinition, b._outputRuntimeDefinition, b._configRuntimeSchema].some((v) => zodSchema(v) !== null);
}
