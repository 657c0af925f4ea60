import { LangGraphThreads, RunStreamLog, StoredAssistants } from '@runledger/ledger';
import type { RouteDeps } from '../options';
import { Assistants } from './assistants';
import { ThreadStateReader } from './thread-state';

/** What the LangGraph Server API routes share: the producer's deps plus the API's own records. */
export interface LangGraphDeps extends RouteDeps {
  assistants: Assistants;
  threads: LangGraphThreads;
  streams: RunStreamLog;
  states: ThreadStateReader;
}

export function langGraphDeps(deps: RouteDeps): LangGraphDeps {
  const options = { crypto: deps.ledger.payloadCodec };
  return {
    ...deps,
    assistants: new Assistants(deps.graphs, new StoredAssistants(deps.ledger.pool, options), deps.graphConfig),
    threads: new LangGraphThreads(deps.ledger.pool, options),
    streams: new RunStreamLog(deps.ledger.pool, options),
    states: new ThreadStateReader(deps.ledger, deps.schema),
  };
}

/** The path of a run, as Content-Location carries it. */
export const runPath = (threadId: string, runId: string) => `/threads/${threadId}/runs/${runId}`;
