/**
 * A run's LangGraph config and context, as the LangGraph API takes them (`config`, `context` of a
 * run or an assistant; `LANGGRAPH_CONFIG`). Merged once at admission, stored with the job (in its
 * run request) and given to the graph at every attempt, recovery and resume alike.
 */
export interface RunConfig {
  configurable?: Record<string, unknown>;
  tags?: string[];
  metadata?: Record<string, unknown>;
  /** Most supersteps before LangGraph stops the run with a GraphRecursionError. Default LangGraph's (25), or the graph's own. */
  recursion_limit?: number;
}

/** One source of a run's configuration: LANGGRAPH_CONFIG's entry of a graph, an assistant, or the run itself. */
export interface ConfigLayer {
  config?: RunConfig;
  /** LangGraph v1 `Runtime.context` (checked by the graph's `contextSchema`). */
  context?: unknown;
}

/** LANGGRAPH_CONFIG: each graph id's default config and context. */
export type GraphConfigDefaults = Readonly<Record<string, ConfigLayer>>;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A run's config and context from its layers, later ones winning, as LangGraph's server merges
 * them: `configurable` and `metadata` key by key, other config keys (`tags`, `recursion_limit`)
 * replaced whole; object contexts key by key, any other context value replacing. The context is
 * `{}` when no layer gives one (LangGraph's server always passes one).
 */
export function mergeRunConfig(
  defaults: ConfigLayer | undefined,
  assistant: ConfigLayer | undefined,
  run: ConfigLayer,
): { config: RunConfig; context: unknown } {
  const layers = [defaults, assistant, run].filter((l): l is ConfigLayer => l !== undefined);
  const config: RunConfig = {};
  let context: unknown = {};
  for (const { config: c, context: x } of layers) {
    if (c) {
      const { configurable, metadata, ...rest } = c;
      Object.assign(config, rest);
      if (configurable) config.configurable = { ...config.configurable, ...configurable };
      if (metadata) config.metadata = { ...config.metadata, ...metadata };
    }
    if (x !== undefined && x !== null) context = isRecord(x) && isRecord(context) ? { ...context, ...x } : x;
  }
  return { config, context };
}

/** Config keys the graph gets from the run (others answer 422 at admission: nothing would read them). */
const CONFIG_KEYS = new Set(['configurable', 'tags', 'metadata', 'recursion_limit']);

/**
 * `configurable` keys a client cannot set: Runledger's own run context, LangGraph's internal keys
 * (`__pregel_*`), and the checkpoint keys, which would run the graph from another checkpoint.
 * `thread_id` is not among them: as on LangGraph's server, the run's own thread id replaces it.
 */
function reservedKey(key: string): string | undefined {
  if (key === 'runledger') return "is reserved for Runledger's run context (runContext)";
  if (key.startsWith('__')) return "is reserved for LangGraph's internal keys";
  if (key === 'checkpoint_id' || key === 'checkpoint_ns' || key === 'checkpoint_map')
    return 'would run the graph from another checkpoint, which Runledger does not support yet';
  return undefined;
}

/**
 * Why a config or context cannot be honoured, naming the field (`where` prefixes it, e.g.
 * `body.config`); undefined when it can. Checked at admission, before anything is written.
 */
export function runConfigProblem(layer: ConfigLayer, where = 'body'): string | undefined {
  const { config } = layer;
  if (config === undefined || config === null) return undefined;
  if (!isRecord(config)) return `${where}.config must be an object`;
  for (const key of Object.keys(config)) {
    if (!CONFIG_KEYS.has(key)) return `${where}.config.${key} is not supported by Runledger (a run's config takes ${[...CONFIG_KEYS].join(', ')})`;
  }
  const { configurable, tags, metadata, recursion_limit: limit } = config;
  if (configurable !== undefined && !isRecord(configurable)) return `${where}.config.configurable must be an object`;
  if (tags !== undefined && !(Array.isArray(tags) && tags.every((t) => typeof t === 'string'))) return `${where}.config.tags must be a list of strings`;
  if (metadata !== undefined && !isRecord(metadata)) return `${where}.config.metadata must be an object`;
  if (limit !== undefined && !(typeof limit === 'number' && Number.isInteger(limit) && limit >= 1))
    return `${where}.config.recursion_limit must be an integer of at least 1`;
  for (const key of Object.keys(configurable ?? {})) {
    const why = reservedKey(key);
    if (why) return `${where}.config.configurable.${key} ${why}`;
  }
  return undefined;
}

/**
 * The invoke options of a stored run config: LangGraph's camelCase names, and only the keys the
 * run sets, so a graph's own `withConfig` default (a recursion limit) stays in force otherwise.
 */
export function invokeOptionsOf(
  stored: { config?: RunConfig; context?: unknown } | undefined,
): { configurable: Record<string, unknown> } & Record<string, unknown> {
  const c = stored?.config ?? {};
  return {
    configurable: { ...c.configurable },
    context: stored?.context ?? {},
    ...(c.tags ? { tags: c.tags } : {}),
    ...(c.metadata ? { metadata: c.metadata } : {}),
    ...(c.recursion_limit !== undefined ? { recursionLimit: c.recursion_limit } : {}),
  };
}

/**
 * LANGGRAPH_CONFIG as LangGraph's server reads it: a JSON object of graph id → that graph's
 * default `{ configurable, tags, recursion_limit, …, context }`. Throws a readable error when the
 * text is not such an object or an entry could not be honoured.
 */
export function parseGraphConfigDefaults(text: string | undefined): GraphConfigDefaults {
  if (text === undefined || text.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new Error(`LANGGRAPH_CONFIG is not valid JSON (${(err as Error).message})`);
  }
  if (!isRecord(parsed)) throw new Error('LANGGRAPH_CONFIG must be a JSON object of graph id → { configurable, context, … }');
  // No prototype: a graph id such as `__proto__` or `constructor` is a plain key here.
  const defaults: Record<string, ConfigLayer> = Object.create(null);
  for (const [graph, entry] of Object.entries(parsed)) {
    if (!isRecord(entry)) throw new Error(`LANGGRAPH_CONFIG.${graph} must be an object`);
    const { context, ...config } = entry;
    const problem = runConfigProblem({ config }, `LANGGRAPH_CONFIG.${graph}`);
    if (problem) throw new Error(problem.replace(`LANGGRAPH_CONFIG.${graph}.config.`, `LANGGRAPH_CONFIG.${graph}.`));
    defaults[graph] = { config: config as RunConfig, context };
  }
  return defaults;
}
