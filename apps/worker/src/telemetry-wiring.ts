import type { Tracer } from '@opentelemetry/api';
import type { CheckpointRetention, JobRetention, Ledger } from '@runledger/ledger';
import type { GraphRegistry } from '@runledger/runtime';
import type { Tracing } from '@runledger/telemetry';
import type { DeliveryOutcome } from './delivery-outcome';
import { withRunFields } from './log';
import { type DeliveryTiming, WorkerMetrics } from './metrics';
import { type MetricsServer, startMetricsServer } from './metrics-server';
import { RetentionTask } from './retention';
import { composeDeliveryWrappers, type DeliveryWrapper, traceDeliveries } from './telemetry';
import { instrumentGraphs } from './telemetry-graphs';

type Log = (level: 'debug' | 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;

export interface ObservabilityOptions {
  ledger: Ledger;
  log: Log;
  /** METRICS_PORT: 0 = no metrics server. */
  metricsPort: number;
  metricsHost?: string;
  /** Tracing: to an OTLP endpoint (undefined = the exporter's default), or with a tracer the caller set up (tests). Default off. */
  tracing?: { endpoint?: string } | { tracer: Tracer } | false;
  /** RETENTION_DAYS; undefined = retention off. */
  retentionDays?: number;
  retentionIntervalMs?: number;
  /** RETENTION_CHECKPOINTS; default 'none'. */
  retentionCheckpoints?: CheckpointRetention;
  /** RETENTION_JOBS; default 'delete'. */
  retentionJobs?: JobRetention;
}

/** Everything a worker process reports about itself: metrics, traces, log context, retention. */
export interface Observability {
  metrics: WorkerMetrics;
  /** The graphs wrapped with node spans, run fields and rejected-write counts. */
  graphs(graphs: GraphRegistry): GraphRegistry;
  /** RunledgerWorker's aroundDelivery: log context, then the attempt span. */
  aroundDelivery: DeliveryWrapper;
  /** RunledgerWorker's onOutcome. */
  onOutcome(jobId: string, outcome: DeliveryOutcome, timing: DeliveryTiming): void;
  /** Starts the gauges on the worker, the metrics server and retention. */
  start(worker: { readonly heartbeatLagMs: number; readonly activeRuns: number }): Promise<void>;
  /** Stops retention and the server, and flushes spans. */
  close(): Promise<void>;
}

/**
 * Composes a worker's observability from its configuration (main.ts passes the parsed env). A
 * metrics port already in use is logged and skipped: the worker runs on without /metrics. The
 * OpenTelemetry SDK is only loaded when tracing is on (it adds about half a second to start-up).
 */
export async function createObservability(o: ObservabilityOptions): Promise<Observability> {
  const metrics = new WorkerMetrics(o.ledger);
  const tracing: Tracing | undefined = !o.tracing
    ? undefined
    : 'tracer' in o.tracing
      ? { tracer: o.tracing.tracer, shutdown: async () => {} }
      : (await import('@runledger/telemetry')).startTracing({ serviceName: 'runledger-worker', endpoint: o.tracing.endpoint });
  const retention =
    o.retentionDays === undefined
      ? undefined
      : new RetentionTask(o.ledger, {
          olderThanDays: o.retentionDays,
          intervalMs: o.retentionIntervalMs,
          checkpoints: o.retentionCheckpoints,
          jobs: o.retentionJobs,
          onReport: (report) => {
            metrics.observeRetention(report);
            if (report.threads > 0 || report.eventPartitions > 0) o.log('info', 'retention pass', { ...report });
          },
          onError: (err) => o.log('warn', 'retention pass failed', { error: (err as Error).message }),
        });
  let server: MetricsServer | undefined;
  const logContext: DeliveryWrapper = (jobId, run) => withRunFields({ jobId }, run);
  return {
    metrics,
    graphs: (graphs) => instrumentGraphs(graphs, { tracer: tracing?.tracer, onRejectedWrites: (source, n) => metrics.rejectedWrites.inc({ source }, n) }),
    aroundDelivery: composeDeliveryWrappers(logContext, tracing ? traceDeliveries(tracing.tracer, o.ledger) : undefined),
    onOutcome: (jobId, outcome, timing) => metrics.observeDelivery(jobId, outcome, timing),
    async start(worker) {
      metrics.watch(worker);
      retention?.start();
      if (o.metricsPort === 0) return;
      try {
        server = await startMetricsServer(metrics.registry, o.metricsPort, o.metricsHost);
        o.log('info', 'metrics served', { port: server.port, path: '/metrics' });
      } catch (err) {
        o.log('warn', 'metrics port unavailable; running without /metrics (set METRICS_PORT)', { port: o.metricsPort, error: (err as Error).message });
      }
    },
    async close() {
      await retention?.stop();
      await server?.close();
      await tracing?.shutdown();
    },
  };
}
