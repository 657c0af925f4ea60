import { v5 as uuid5 } from '@langchain/core/utils/uuid';
import { MemorySaver } from '@langchain/langgraph';
import type { BuiltInAssistant, StoredAssistant, StoredAssistants } from '@runledger/ledger';
import type { GraphConfigDefaults, GraphDefinition, GraphRegistry } from '@runledger/runtime';
import { ApiError } from '../http-errors';

/** The namespace LangGraph Platform derives a graph's default assistant id from (uuid5 of the graph id). */
const GRAPH_NAMESPACE = '6ba7b821-9dad-11d1-80b4-00c04fd430c8';

/** The default assistant id of a graph, as LangGraph Platform computes it. */
export const assistantIdOf = (graphId: string): string => uuid5(graphId, GRAPH_NAMESPACE);

/** The job metadata key a run records its assistant under: `{ assistant_id, version }`, the version it is pinned to. */
export const ASSISTANT_KEY = 'runledger_assistant';

/** The time every default assistant reports as created: they are derived from the registry, never stored. */
const CREATED_AT = new Date(0);

/**
 * The assistant a run starts with, resolved once at admission: its id and the version the run is
 * pinned to, its graph, and that version's config and context (the assistant layer of the run's
 * config: defaults < assistant < run).
 */
export interface RunAssistant {
  assistantId: string;
  version: number;
  graphId: string;
  config: Record<string, unknown>;
  context: Record<string, unknown>;
}

/** An assistant as the routes see it: a stored one, or a graph's default one (`builtIn`, read-only). */
export type Assistant = StoredAssistant & { builtIn: boolean };

/** The default assistant of a graph, in the stored assistants' shape: its config and context are LANGGRAPH_CONFIG's entry of the graph, as on LangGraph's server. */
function builtInOf(g: GraphDefinition, defaults: GraphConfigDefaults): Assistant {
  const at = CREATED_AT;
  const layer = Object.hasOwn(defaults, g.name) ? defaults[g.name] : undefined;
  const context = (layer?.context ?? {}) as Record<string, unknown>;
  const base = { config: (layer?.config ?? {}) as Record<string, unknown>, context, version: 1, lastVersion: 1, createdAt: at, updatedAt: at, builtIn: true };
  return { ...base, assistantId: assistantIdOf(g.name), graphId: g.name, name: g.name, description: g.description ?? null, metadata: { created_by: 'system' } };
}

/** Assistants: a default one per served graph (found by assistant id or graph id) and each tenant's stored ones. */
export class Assistants {
  private readonly byId = new Map<string, GraphDefinition>();
  private readonly nodes = new Map<string, ReadonlySet<string>>();

  constructor(
    private readonly graphs: GraphRegistry,
    readonly store: StoredAssistants,
    private readonly defaults: GraphConfigDefaults = {},
  ) {
    for (const g of graphs.values()) this.byId.set(assistantIdOf(g.name), g);
  }

  /** The graph of a default assistant id or a graph id; undefined when neither is known. */
  find(id: string): GraphDefinition | undefined {
    return this.graphs.get(id) ?? this.byId.get(id.toLowerCase());
  }

  /** Like find; throws 404 not_found naming the served graphs. */
  resolve(id: string): GraphDefinition {
    const found = this.find(id);
    if (!found)
      throw new ApiError(
        404,
        'not_found',
        `No assistant found for "${id}": it is neither an assistant nor a served graph (served graphs: ${[...this.graphs.keys()].join(', ')}).`,
      );
    return found;
  }

  /** A served graph by id; throws 422 naming `field` and the served graphs otherwise. */
  served(graphId: string, field = 'graph_id'): GraphDefinition {
    const g = this.graphs.get(graphId);
    if (!g) throw new ApiError(422, 'invalid_request', `${field} "${graphId}" is not a served graph; served graphs: ${[...this.graphs.keys()].join(', ')}.`);
    return g;
  }

  /** The tenant's assistant of that id (a default one also by graph id); undefined when none. */
  async lookup(tenant: string, id: string): Promise<Assistant | undefined> {
    const builtIn = this.builtIn(id);
    if (builtIn) return builtIn;
    const stored = await this.store.get(tenant, id);
    return stored && { ...stored, builtIn: false };
  }

  /** Like lookup; throws 404 not_found. */
  async get(tenant: string, id: string): Promise<Assistant> {
    const found = await this.lookup(tenant, id);
    if (!found)
      throw new ApiError(
        404,
        'not_found',
        `Assistant not found. No assistant found for "${id}": it is neither an assistant nor a served graph (served graphs: ${[...this.graphs.keys()].join(', ')}).`,
      );
    return found;
  }

  /** The tenant's assistant and its graph; throws 404 when either is missing (a stored assistant's graph may be no longer served). */
  async withGraph(tenant: string, id: string): Promise<{ assistant: Assistant; graph: GraphDefinition }> {
    const assistant = await this.get(tenant, id);
    const graph = this.graphs.get(assistant.graphId);
    if (!graph) throw new ApiError(404, 'not_found', `Assistant ${assistant.assistantId} runs graph "${assistant.graphId}", which is not served here.`);
    return { assistant, graph };
  }

  /** What a run on assistant (or graph) `id` starts with, pinned to the assistant's current version. Throws 404. */
  async forRun(tenant: string, id: string): Promise<{ assistant: RunAssistant; graph: GraphDefinition }> {
    const { assistant: a, graph } = await this.withGraph(tenant, id);
    return { graph, assistant: { assistantId: a.assistantId, version: a.version, graphId: a.graphId, config: a.config, context: a.context } };
  }

  /** The default assistant of that id (or graph id); undefined for any other id. */
  builtIn(id: string): Assistant | undefined {
    const graph = this.find(id);
    return graph && builtInOf(graph, this.defaults);
  }

  /** The default assistants, for search and count beside the stored ones. */
  builtIns(): BuiltInAssistant[] {
    return [...this.graphs.values()].map((g) => builtInOf(g, this.defaults));
  }

  /** The node names of a graph (compiled once, on an in-memory saver); empty when it exposes none. */
  nodeNames(g: GraphDefinition): ReadonlySet<string> {
    let names = this.nodes.get(g.name);
    if (!names) {
      const compiled = g.build(new MemorySaver()) as { nodes?: Record<string, unknown> };
      names = new Set(Object.keys(compiled.nodes ?? {}).filter((n) => n !== '__start__'));
      this.nodes.set(g.name, names);
    }
    return names;
  }
}

/** The LangGraph API's Assistant object. */
export function assistantView(a: StoredAssistant) {
  return {
    assistant_id: a.assistantId,
    graph_id: a.graphId,
    name: a.name,
    description: a.description,
    config: a.config,
    context: a.context,
    metadata: a.metadata,
    version: a.version,
    created_at: a.createdAt.toISOString(),
    updated_at: a.updatedAt.toISOString(),
  };
}

/** The LangGraph API's AssistantVersion object. */
export function versionView(v: Omit<StoredAssistant, 'updatedAt' | 'lastVersion'>) {
  const { assistant_id, graph_id, name, description, config, context, metadata, version } = assistantView({
    ...v,
    updatedAt: v.createdAt,
    lastVersion: v.version,
  });
  return { assistant_id, graph_id, name, description, config, context, metadata, version, created_at: v.createdAt.toISOString() };
}
