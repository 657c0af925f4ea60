import { type Job, type Ledger, RunStreamLog } from '@runledger/ledger';
import { graphStreamModes, type RunnableGraph, StreamEventMapper, serializeChunk, streamRequestOf } from '@runledger/runtime';

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

  constructor(
    private readonly log: RunStreamLog,
    private readonly jobId: string,
    private readonly token: number,
  ) {}

  push(event: string, data: unknown): void {
    if (this.failure) throw this.failure;
    // Serialised now: a message chunk is a live object the graph may keep changing.
    this.buffer.push({ event, data: JSON.parse(serializeChunk(data)) });
    this.flushing ??= this.flush();
  }

  private async flush(): Promise<void> {
    while (this.buffer.length > 0 && !this.failure) {
      const batch = this.buffer;
      this.buffer = [];
      try {
        await this.log.append(this.jobId, this.token, batch);
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

/**
 * Runs the graph for one attempt. A job whose client asked to stream it (its stream request,
 * stored at admission) is run with `graph.stream`, every chunk appended to the stream log under
 * the attempt's fencing token, after a `metadata` event naming the attempt; it then returns
 * undefined (the caller reads the final state). Any other job is `invoke`d and pays nothing.
 */
export async function runGraph(ledger: Ledger, job: Job, graph: RunnableGraph, input: unknown, config: Record<string, unknown>): Promise<unknown> {
  const request = streamRequestOf(job.metadata);
  if (!request || !canStream(graph)) return graph.invoke(input, config);
  const writer = new StreamWriter(new RunStreamLog(ledger.pool, { crypto: ledger.payloadCodec }), job.jobId, job.fencingToken);
  const mapper = new StreamEventMapper(request);
  writer.push('metadata', { run_id: job.jobId, attempt: job.attempt });
  try {
    const stream = await graph.stream(input, { ...config, streamMode: graphStreamModes(request), subgraphs: request.subgraphs });
    for await (const part of stream) {
      const [ns, mode, chunk] = request.subgraphs ? (part as [string[], string, unknown]) : [[], ...(part as [string, unknown])];
      for (const e of mapper.map(mode, chunk, ns)) writer.push(e.event, e.data);
    }
  } finally {
    // Chunks already produced reach the log before the attempt's outcome is recorded.
    await writer.close();
  }
  return undefined;
}
