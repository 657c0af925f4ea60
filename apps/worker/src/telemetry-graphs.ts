import { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import type { Serialized } from '@langchain/core/load/serializable';
import { type Context, context, type Span, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';
import { FencedPostgresSaver, LeaseLostError } from '@runledger/ledger';
import type { GraphDefinition, GraphRegistry, RunContext, RunnableGraph } from '@runledger/runtime';
import { addRunFields } from './log';

export interface GraphInstrumentation {
  /** Adds a span for the graph run and one per node (LangGraph callbacks) under the active span. */
  tracer?: Tracer;
  /** Writes refused for a stale fencing token during one invoke: checkpoint transactions (from the saver) or ledger writes. */
  onRejectedWrites?: (source: 'checkpoint' | 'ledger', count: number) => void;
}

/** One span per LangGraph run of the graph and of each of its nodes (direct children of the graph run). */
class NodeSpans extends BaseCallbackHandler {
  name = 'runledger_node_spans';
  // Spans end before invoke returns, in order.
  override awaitHandlers = true;
  private rootRunId: string | undefined;
  private readonly spans = new Map<string, Span>();

  constructor(
    private readonly tracer: Tracer,
    private readonly graphName: string,
    private readonly parent: Context,
  ) {
    super();
  }

  // LangChain's CallbackManager calls (chain, inputs, runId, parentRunId, tags, metadata, runType,
  // runName): the parent run is the 4th argument, whatever the declared parameter names say.
  override handleChainStart(
    _chain: Serialized,
    _inputs: unknown,
    runId: string,
    parentRunId?: string,
    _tags?: unknown,
    metadata?: Record<string, unknown>,
  ): void {
    if (!parentRunId && !this.rootRunId) {
      this.rootRunId = runId;
      this.spans.set(runId, this.tracer.startSpan(`graph ${this.graphName}`, { attributes: { 'langgraph.graph': this.graphName } }, this.parent));
      return;
    }
    const node = metadata?.langgraph_node;
    const root = this.rootRunId ? this.spans.get(this.rootRunId) : undefined;
    // Only the graph's own tasks; `__start__` and other internal steps are not user nodes.
    if (parentRunId !== this.rootRunId || typeof node !== 'string' || node.startsWith('__') || !root) return;
    const attributes = { 'langgraph.node': node, 'langgraph.step': Number(metadata?.langgraph_step ?? -1) };
    this.spans.set(runId, this.tracer.startSpan(`node ${node}`, { attributes }, trace.setSpan(this.parent, root)));
  }

  override handleChainEnd(_outputs: unknown, runId: string): void {
    this.spans.get(runId)?.end();
    this.spans.delete(runId);
  }

  override handleChainError(err: Error, runId: string): void {
    const span = this.spans.get(runId);
    if (!span) return;
    // An interrupt or a drain stops the run on purpose; everything else is an error.
    if (!/GraphInterrupt|GraphDrained|AbortError/.test(err.name)) {
      span.recordException(err);
      span.setStatus({ code: SpanStatusCode.ERROR, message: err.message });
    } else span.setAttribute('langgraph.stopped', err.name);
    span.end();
    this.spans.delete(runId);
  }
}

function isLeaseLost(err: unknown): boolean {
  for (let e = err, depth = 0; e && depth < 8; e = (e as { cause?: unknown }).cause, depth++) if (e instanceof LeaseLostError) return true;
  return false;
}

function instrumentGraph(def: GraphDefinition, options: GraphInstrumentation): GraphDefinition {
  return {
    ...def,
    build(checkpointer) {
      const graph = def.build(checkpointer);
      const saver = checkpointer instanceof FencedPostgresSaver ? checkpointer : undefined;
      // Before a run: its thread, attempt and token on log lines and the attempt span; the config with node spans.
      const begin = (config: Record<string, unknown>) => {
        const ctx = (config.configurable as { runledger?: RunContext } | undefined)?.runledger;
        if (ctx) {
          addRunFields({ threadId: ctx.threadId, attempt: ctx.attempt, token: ctx.fencingToken });
          trace
            .getActiveSpan()
            ?.setAttributes({ 'runledger.thread_id': ctx.threadId, 'runledger.attempt': ctx.attempt, 'runledger.fencing_token': ctx.fencingToken });
        }
        const callbacks = Array.isArray(config.callbacks) ? config.callbacks : [];
        const traced = options.tracer ? { ...config, callbacks: [...callbacks, new NodeSpans(options.tracer, def.name, context.active())] } : config;
        return { traced, before: saver?.rejectedWrites ?? 0 };
      };
      const failed = (err: unknown, config: Record<string, unknown>, before: number) => {
        const signal = config.signal as AbortSignal | undefined;
        // A refused ledger write inside a node (not the heartbeat's abort, not the saver's own refusal).
        const fromSaver = (saver?.rejectedWrites ?? 0) > before;
        if (!fromSaver && isLeaseLost(err) && !(signal?.aborted && isLeaseLost(signal.reason))) options.onRejectedWrites?.('ledger', 1);
      };
      const ended = (before: number) => {
        const refused = (saver?.rejectedWrites ?? 0) - before;
        if (refused > 0) options.onRejectedWrites?.('checkpoint', refused);
      };
      const instrumented: RunnableGraph = {
        // Passed on, or every run would read its final state back (execute.ts, stateKeys).
        streamChannelsAsIs: graph.streamChannelsAsIs,
        getState: (config) => graph.getState(config),
        async invoke(input, config) {
          const { traced, before } = begin(config);
          try {
            return await graph.invoke(input, traced);
          } catch (err) {
            failed(err, config, before);
            throw err;
          } finally {
            ended(before);
          }
        },
      };
      const stream = graph.stream?.bind(graph);
      if (stream) {
        instrumented.stream = async (input, config) => {
          const { traced, before } = begin(config);
          return (async function* () {
            try {
              yield* await stream(input, traced);
            } catch (err) {
              failed(err, config, before);
              throw err;
            } finally {
              ended(before);
            }
          })();
        };
      }
      const streamEvents = graph.streamEvents?.bind(graph);
      if (streamEvents) {
        instrumented.streamEvents = (input, config) => {
          const { traced, before } = begin(config);
          return (async function* () {
            try {
              yield* streamEvents(input, { ...traced, version: 'v2' });
            } catch (err) {
              failed(err, config, before);
              throw err;
            } finally {
              ended(before);
            }
          })();
        };
      }
      return instrumented;
    },
  };
}

/**
 * The registry with every graph wrapped for observability: node spans (when a tracer is given),
 * the run's thread, attempt and token on log lines and on the attempt span, and counts of
 * writes refused for a stale fencing token. Runs exactly as before otherwise.
 */
export function instrumentGraphs(graphs: GraphRegistry, options: GraphInstrumentation): GraphRegistry {
  return new Map([...graphs].map(([name, def]) => [name, instrumentGraph(def, options)]));
}
