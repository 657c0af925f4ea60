import { type Job, type Ledger, langGraphThreadId, RunStreamLog } from '@runledger/ledger';
import { clientChunk, graphStreamModes, type RunnableGraph, StreamEventMapper, type StreamRequest, streamRequestOf } from '@runledger/runtime';

type StreamingGraph = RunnableGraph & Required<Pick<RunnableGraph, 'stream'>>;

const canStream = (graph: RunnableGraph): graph is StreamingGraph => typeof graph.stream === 'function';

/**
 * Appends a run's chunks to its stream log in order: one statement at a time, each carrying every
 * chunk that arrived while the previous one was in flight, so a fast token stream costs few round
 * trips. The first failure (LeaseLostError for a stale token) is kept and thrown by `push` and `close`.
 */
class StreamWriter {
  private buffer: Array<{ event: string; data: unknown }> = [];
  private flushing: Promise<void> | undefined;
  private failure: unknown;

  private readonly threadIds: { worker: string; client: string };

  constructor(
    private readonly log: RunStreamLog,
    private readonly job: Job,
  ) {
    this.threadIds = { worker: langGraphThreadId(job.tenant, job.threadId), client: job.threadId };
  }

  push(event: string, data: unknown): void {
    if (this.failure) throw this.failure;
    // Serialised now: a message chunk is a live object the graph may keep changing. Without the
    // worker's run context (config keys, Runledger's own, the tenant-scoped thread id).
    this.buffer.push({ event, data: JSON.parse(clientChunk(data, this.threadIds)) });
    this.flushing ??= this.flush();
  }

  private async flush(): Promise<void> {
    while (this.buffer.length > 0 && !this.failure) {
      const batch = this.buffer;
      this.buffer = [];
      try {
        await this.log.append(this.job.jobId, this.job.fencingToken, batch);
      } catch (err) {
        this.failure = err;
      }
    }
    this.flushing = undefined;
  }

  async close(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.failure) throw this.failure;
  }
}

type Part = { ns: string[]; mode: string; chunk: unknown } | { event: unknown };

/** The graph's stream as parts: `[mode, chunk]` tuples of `graph.stream`, and for the `events` mode every streamEvents v2 event but the graph's own stream chunks. */
async function* partsOf(graph: StreamingGraph, request: StreamRequest, input: unknown, config: Record<string, unknown>): AsyncGenerator<Part> {
  const options = { ...config, streamMode: graphStreamModes(request), subgraphs: request.subgraphs };
  const tuple = (part: unknown): Part => {
    const [ns, mode, chunk] = request.subgraphs ? (part as [string[], string, unknown]) : [[], ...(part as [string, unknown])];
    return { ns, mode, chunk };
  };
  if (!request.modes.includes('events') || !graph.streamEvents) {
    for await (const part of await graph.stream(input, options)) yield tuple(part);
    return;
  }
  let root: string | undefined;
  for await (const raw of graph.streamEvents(input, { ...options, version: 'v2' })) {
    const event = raw as { event: string; run_id: string; tags?: string[]; data?: { chunk?: unknown } };
    // The first event is the graph run's own start.
    root ??= event.run_id;
    if (event.tags?.includes('langsmith:hidden')) continue;
    // The graph's own output chunks are its stream modes, as the reference server splits them.
    if (event.event === 'on_chain_stream' && event.run_id === root) yield tuple(event.data?.chunk);
    else yield { event };
  }
}

/**
 * Runs the graph for one attempt. A job whose client asked to stream it (its stream request,
 * stored at admission) is run with `graph.stream` (`streamEvents` for the `events` mode), every
 * chunk appended to the stream log under the attempt's fencing token, after a `metadata` event
 * naming the attempt; it then returns undefined (the caller reads the final state). Any other job
 * is `invoke`d and pays nothing.
 */
export async function runGraph(ledger: Ledger, job: Job, graph: RunnableGraph, input: unknown, config: Record<string, unknown>): Promise<unknown> {
  const request = streamRequestOf(job.metadata);
  if (!request || !canStream(graph)) return graph.invoke(input, config);
  const writer = new StreamWriter(new RunStreamLog(ledger.pool, { crypto: ledger.payloadCodec }), job);
  const mapper = new StreamEventMapper(request);
  writer.push('metadata', { run_id: job.jobId, attempt: job.attempt });
  try {
    for await (const part of partsOf(graph, request, input, config)) {
      if ('event' in part) writer.push('events', part.event);
      else for (const e of mapper.map(part.mode, part.chunk, part.ns)) writer.push(e.event, e.data);
    }
  } finally {
    // Chunks already produced reach the log before the attempt's outcome is recorded.
    await writer.close();
  }
  return undefined;
}
