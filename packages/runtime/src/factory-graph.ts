import type { RunnableGraph } from './registry';

type Config = Record<string, unknown> & { configurable?: Record<string, unknown> };

/** What LangGraph's compiled graph offers beyond RunnableGraph, as the LangGraph API routes call it. */
interface CompiledCalls {
  stream(input: unknown, config: Config): Promise<AsyncIterable<unknown>>;
  streamEvents(input: unknown, config: Config & { version: 'v2' }): AsyncIterable<unknown>;
  getState(config: Config, options?: unknown): ReturnType<RunnableGraph['getState']>;
  getStateHistory(config: Config, options?: unknown): AsyncIterable<unknown>;
  updateState(config: Config, values: unknown, asNode?: string): Promise<unknown>;
  bulkUpdateState(config: Config, supersteps: unknown): Promise<unknown>;
  getGraphAsync(config?: Config): Promise<unknown>;
  getSubgraphsAsync(namespace?: string, recurse?: boolean): AsyncIterable<unknown>;
}

/** Builds the graph for one call's config, on the attempt's saver. */
export type BuildFor = (config: Config) => Promise<RunnableGraph>;

/**
 * The graph of a factory export (`(config) => graph`): each call builds the graph with that
 * call's config first, as `langgraph dev` does, so a factory that picks its nodes from
 * `configurable` runs, streams, reads and updates the graph the run asked for. Calls without a
 * config (drawing, subgraphs) build it with an empty one.
 */
export class FactoryGraph implements RunnableGraph {
  constructor(private readonly buildFor: BuildFor) {}

  private async made(config: Config = {}): Promise<CompiledCalls> {
    return (await this.buildFor(config)) as unknown as CompiledCalls;
  }

  async invoke(input: unknown, config: Config) {
    return (await this.buildFor(config)).invoke(input, config);
  }
  async stream(input: unknown, config: Config) {
    return (await this.made(config)).stream(input, config);
  }
  async *streamEvents(input: unknown, config: Config & { version: 'v2' }) {
    yield* (await this.made(config)).streamEvents(input, config);
  }
  async getState(config: Config, options?: unknown) {
    return (await this.made(config)).getState(config, options);
  }
  async *getStateHistory(config: Config, options?: unknown) {
    yield* (await this.made(config)).getStateHistory(config, options);
  }
  async updateState(config: Config, values: unknown, asNode?: string) {
    return (await this.made(config)).updateState(config, values, asNode);
  }
  async bulkUpdateState(config: Config, supersteps: unknown) {
    return (await this.made(config)).bulkUpdateState(config, supersteps);
  }
  async getGraphAsync(config?: Config) {
    return (await this.made(config)).getGraphAsync(config);
  }
  async *getSubgraphsAsync(namespace?: string, recurse?: boolean) {
    yield* (await this.made()).getSubgraphsAsync(namespace, recurse);
  }
}
