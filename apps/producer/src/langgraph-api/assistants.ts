import { v5 as uuid5 } from '@langchain/core/utils/uuid';
import { MemorySaver } from '@langchain/langgraph';
import type { GraphDefinition, GraphRegistry } from '@runledger/runtime';
import { ApiError } from '../http-errors';

/** The namespace LangGraph Platform derives a graph's default assistant id from (uuid5 of the graph id). */
const GRAPH_NAMESPACE = '6ba7b821-9dad-11d1-80b4-00c04fd430c8';

/** The default assistant id of a graph, as LangGraph Platform computes it. */
export const assistantIdOf = (graphId: string): string => uuid5(graphId, GRAPH_NAMESPACE);

/** The time every default assistant reports as created: assistants are derived from the registry, never stored. */
const CREATED_AT = new Date(0).toISOString();

/** One default assistant per registered graph; an assistant id or a graph id finds it. */
export class Assistants {
  private readonly byId = new Map<string, GraphDefinition>();

  constructor(private readonly graphs: GraphRegistry) {
    for (const g of graphs.values()) this.byId.set(assistantIdOf(g.name), g);
  }

  /** The graph of an assistant id or graph id; undefined when neither is known. */
  find(id: string): GraphDefinition | undefined {
    return this.graphs.get(id) ?? this.byId.get(id.toLowerCase());
  }

  /** Like find; throws 404 not_found naming the known graphs. */
  resolve(id: string): GraphDefinition {
    const found = this.find(id);
    if (!found) throw new ApiError(404, 'not_found', `No assistant or graph "${id}"; known graphs: ${[...this.graphs.keys()].join(', ')}.`);
    return found;
  }

  private readonly nodes = new Map<string, ReadonlySet<string>>();

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

  all(): GraphDefinition[] {
    return [...this.graphs.values()];
  }
}

/** The LangGraph API's Assistant object of a graph's default assistant. */
export function assistantView(g: GraphDefinition) {
  return {
    assistant_id: assistantIdOf(g.name),
    graph_id: g.name,
    name: g.name,
    description: g.description,
    config: {},
    context: {},
    metadata: { created_by: 'system' },
    version: 1,
    created_at: CREATED_AT,
    updated_at: CREATED_AT,
  };
}
