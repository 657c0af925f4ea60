import type { Ledger } from '@runledger/ledger';
import type { DeliveryData } from '@runledger/queue';
import type { GraphConfigDefaults, GraphRegistry, StoreConfig } from '@runledger/runtime';
import type { Queue } from 'bullmq';
import type { FastifyServerOptions } from 'fastify';
import type { Admitter } from './admitter';
import type { OpenStreamLimits } from './langgraph-api/open-streams';
import type { ThreadStateLimits } from './langgraph-api/thread-state';
import type { ServedVersions } from './served-versions';
import type { WebhookDestinations } from './webhooks/destinations';

/** Webhooks: where runs' webhooks may go, and the server key tenants' signing secrets derive from. */
export interface WebhookSettings {
  destinations: WebhookDestinations;
  /** WEBHOOK_SIGNING_KEY; set whenever `destinations` allows any host. */
  signingKey?: string;
}

/** The LangGraph API's streams, joins and waits: how many may be open, and an observer of the shared run tails. */
export interface StreamOptions {
  /** Beyond either limit a new stream, join or wait answers 429. Defaults 2,000 in all, 200 per tenant. */
  limits?: Partial<OpenStreamLimits>;
  /** Called at each poll of a run's shared tail (one poller per watched run, however many clients watch). */
  onTailPoll?: (runId: string) => void;
}

import type { CorsPolicy } from './langgraph-api/cors';

/** What the producer app needs; main.ts opens these, tests pass real ones. The caller closes them. */
export interface AppOptions {
  ledger: Ledger;
  /** The queue deliveries go to (openQueue from @runledger/queue, either backend). */
  queue: Queue<DeliveryData>;
  /** Graphs admissions may name (loadGraphs from @runledger/runtime). */
  graphs: GraphRegistry;
  /** Each graph's default run config and context (LANGGRAPH_CONFIG, parseGraphConfigDefaults); a run's own win. Default none. */
  graphConfig?: GraphConfigDefaults;
  /** langgraph.json `store` (loadStoreConfig): the /store routes' index and ttls. Default none: no index, no expiry. */
  store?: StoreConfig;
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
  /** RUNLEDGER_TEST_HOOKS: serve POST /internal/truncate (LangGraph's API tests start from an empty server with it). Default false (404). */
  testHooks?: boolean;
  /**
   * Limits of POST /v1/crons: at most `maxPerTenant` crons per tenant (429), no schedule firing
   * less than `minIntervalMs` apart (422). Default 100 and 60,000 (CRON_MAX_PER_TENANT, CRON_MIN_INTERVAL_MS).
   */
  cronLimits?: CronLimits;
  streams?: StreamOptions;
  threadState?: Partial<ThreadStateLimits>;
  /** Where a run's `webhook` may point (WEBHOOK_ALLOWED_HOSTS, WEBHOOK_SIGNING_KEY). Default none: a webhook answers 422. */
  webhooks?: WebhookSettings;
  /** Test hook (RUNLEDGER_TEST_CRASH_AT): `after_admit_commit` SIGKILLs the process between an admission's commit and its queue add. */
  crashAt?: 'after_admit_commit';
}

export interface CronLimits {
  maxPerTenant: number;
  minIntervalMs: number;
}

export const DEFAULT_CRON_LIMITS: CronLimits = { maxPerTenant: 100, minIntervalMs: 60_000 };

/** AppOptions with defaults applied, as the routes see them. */
export type RouteDeps = Required<Pick<AppOptions, 'ledger' | 'queue' | 'graphs' | 'graphConfig' | 'schema' | 'enqueueTimeoutMs' | 'cronLimits'>> & {
  admitter: Admitter;
  /** Whether a live worker serves an admitted job's graph and version (a warning in the answer when none does). */
  served: ServedVersions;
  webhooks: WebhookSettings;
  store?: StoreConfig;
};
