import type { Ledger } from '@runledger/ledger';
import type { DeliveryData } from '@runledger/queue';
import type { GraphRegistry } from '@runledger/runtime';
import type { Queue } from 'bullmq';
import type { FastifyServerOptions } from 'fastify';
import type { Admitter } from './admitter';
import type { CorsPolicy } from './langgraph-api/cors';

/** What the producer app needs; main.ts opens these, tests pass real ones. The caller closes them. */
export interface AppOptions {
  ledger: Ledger;
  /** The queue deliveries go to (openQueue from @runledger/queue, either backend). */
  queue: Queue<DeliveryData>;
  /** Graphs admissions may name (loadGraphs from @runledger/runtime). */
  graphs: GraphRegistry;
  /** Ledger schema; the thread-state route reads LangGraph's checkpoint tables there. */
  schema: string;
  /** Largest accepted request body. Default 1 MiB. */
  bodyLimitBytes?: number;
  /** Admissions answer 503 backlog_full while the queue holds this many deliveries no worker has taken. Default 100,000; 0 = no limit. */
  maxBacklog?: number;
  /** Longest an admission waits for the queue before answering `enqueued: false`. Default 1000 ms. */
  enqueueTimeoutMs?: number;
  /**
   * Group commit of admissions: requests arriving within `windowMs` share one ledger transaction
   * and one round of queue adds. `false` (the default) commits each admission on its own.
   */
  groupCommit?: false | { windowMs?: number; maxBatch?: number };
  /** Fastify logger option. Default false (silent). */
  logger?: FastifyServerOptions['logger'];
  /** Where Bull Board links each queue job. Default the dashboard's job page, `/admin/jobs/<jobId>` (Bull Board is as private as it). */
  ledgerJobUrl?: (jobId: string) => string;
  /**
   * Which browser origins may call the API (CORS, for the LangGraph SDK's `useStream` in a web
   * app; see corsPolicy). Default none: no CORS headers, browsers allow same-origin only.
   */
  cors?: CorsPolicy;
  /** Test hook (RUNLEDGER_TEST_CRASH_AT): `after_admit_commit` SIGKILLs the process between an admission's commit and its queue add. */
  crashAt?: 'after_admit_commit';
}

/** AppOptions with defaults applied, as the routes see them. */
export type RouteDeps = Required<Pick<AppOptions, 'ledger' | 'queue' | 'graphs' | 'schema' | 'enqueueTimeoutMs'>> & { admitter: Admitter };
