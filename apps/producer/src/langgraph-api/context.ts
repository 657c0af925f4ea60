import { LangGraphThreads, RunStreamLog, StoredAssistants } from '@runledger/ledger';
import type { CustomAuth } from '@runledger/runtime';
import type { RouteDeps, StreamOptions } from '../options';
import { Assistants } from './assistants';
import { DEFAULT_OPEN_STREAM_LIMITS, OpenStreams } from './open-streams';
import { RunTails } from './run-tails';
import { DEFAULT_THREAD_STATE_LIMITS, type ThreadStateLimits, ThreadStateReader } from './thread-state';
import { TypeSchemas } from './type-schemas';

/** What the LangGraph Server API routes share: the producer's deps plus the API's own records. */
export interface LangGraphDeps extends RouteDeps {
  assistants: Assistants;
  threads: LangGraphThreads;
  streams: RunStreamLog;
  states: ThreadStateReader;
  /** One shared poller per streamed or joined run. */
  tails: RunTails;
  openStreams: OpenStreams;
  stateLimits: ThreadStateLimits;
  /** The graphs' schemas read from their TypeScript types (an Annotation state's). */
  typeSchemas: TypeSchemas;
  /** langgraph.json's `auth.path`: its `on(…)` handlers authorize each request (auth-hook.ts). */
  customAuth?: CustomAuth;
}

export function langGraphDeps(
  deps: RouteDeps,
  streamOptions: StreamOptions = {},
  stateLimits: Partial<ThreadStateLimits> = {},
  customAuth?: CustomAuth,
): LangGraphDeps {
  const options = { crypto: deps.ledger.payloadCodec };
  const streams = new RunStreamLog(deps.ledger.pool, options);
  const reads = {
    lastId: (jobId: string) => streams.lastId(jobId),
    read: (jobId: string, afterId: number, limit: number) => streams.read(jobId, afterId, limit),
    tail: (jobId: string, afterId: number, limit: number) => streams.tail(jobId, afterId, limit),
    job: (jobId: string) => deps.ledger.get(jobId),
  };
  return {
    ...deps,
    assistants: new Assistants(deps.graphs, new StoredAssistants(deps.ledger.pool, options), deps.graphConfig),
    threads: new LangGraphThreads(deps.ledger.pool, options),
    streams,
    states: new ThreadStateReader(deps.ledger, deps.schema),
    tails: new RunTails(reads, streamOptions.onTailPoll),
    openStreams: new OpenStreams({ ...DEFAULT_OPEN_STREAM_LIMITS, ...streamOptions.limits }),
    stateLimits: { ...DEFAULT_THREAD_STATE_LIMITS, ...stateLimits },
    typeSchemas: new TypeSchemas(deps.graphs),
    customAuth,
  };
}

/** The path of a run, as Content-Location carries it. */
export const runPath = (threadId: string, runId: string) => `/threads/${threadId}/runs/${runId}`;
