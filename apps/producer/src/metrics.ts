import { ALL_STATUSES, DashboardReads, type Ledger } from '@runledger/ledger';
import type { DeliveryData } from '@runledger/queue';
import type { Queue } from 'bullmq';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** How an admission (POST /v1/jobs) ended, by its HTTP status. */
export type AdmissionOutcome = 'created' | 'duplicate' | 'conflict' | 'rejected' | 'db_unavailable' | 'error';

export function admissionOutcome(statusCode: number): AdmissionOutcome {
  if (statusCode === 202) return 'created';
  if (statusCode === 200) return 'duplicate';
  if (statusCode === 409) return 'conflict';
  if (statusCode === 503) return 'db_unavailable';
  return statusCode >= 400 && statusCode < 500 ? 'rejected' : 'error';
}

const EFFECT_STATUSES = ['pending', 'committed', 'failed'] as const;
const QUEUE_STATES = ['waiting', 'delayed', 'active', 'prioritized', 'failed', 'completed'] as const;

/**
 * The producer's Prometheus metrics: admissions and their latency, operator transitions, and at
 * scrape time the ledger's jobs and effects by status and the queue's depth. One registry per
 * app, so apps built in one process (tests) do not collide.
 */
export class ProducerMetrics {
  readonly registry = new Registry();
  readonly admissions = new Counter({ name: 'runledger_admissions_total', help: 'Admissions by outcome', labelNames: ['outcome'], registers: [this.registry] });
  readonly admissionSeconds = new Histogram({
    name: 'runledger_admission_duration_seconds',
    help: 'Time to answer POST /v1/jobs (ledger commit and queue add)',
    labelNames: ['outcome'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });
  readonly transitions = new Counter({
    name: 'runledger_job_transitions_total',
    help: 'Job status transitions made by this process, by new status',
    labelNames: ['to'],
    registers: [this.registry],
  });
  /** The ledger counts being read: both gauges of one scrape (and overlapping scrapes) share one read. */
  private counting: Promise<{ jobs: Record<string, number>; effects: Record<string, number>; waitingForThread: number }> | undefined;

  constructor(ledger: Ledger, queue: Queue<DeliveryData>) {
    const reads = new DashboardReads(ledger.pool);
    const ledgerCounts = () => {
      this.counting ??= Promise.all([ledger.countByStatus(), reads.effectCounts(), ledger.countWaitingForThread()])
        .then(([jobs, effects, waitingForThread]) => ({ jobs, effects, waitingForThread }))
        .finally(() => {
          this.counting = undefined;
        });
      return this.counting;
    };
    const registers = [this.registry];
    new Gauge({
      name: 'runledger_jobs',
      help: 'Jobs in the ledger by status (all producers report the same numbers: aggregate with max)',
      labelNames: ['status'],
      registers,
      async collect() {
        const counts = await ledgerCounts().catch(() => undefined);
        // Every status, zero included: a status whose last job moved on must drop to 0.
        if (counts) for (const status of ALL_STATUSES) this.set({ status }, counts.jobs[status] ?? 0);
      },
    });
    new Gauge({
      name: 'runledger_jobs_waiting_for_thread',
      help: 'Jobs ready to run but for their thread, which an earlier unfinished job (parked, running, waiting) holds',
      registers,
      async collect() {
        const counts = await ledgerCounts().catch(() => undefined);
        if (counts) this.set(counts.waitingForThread);
      },
    });
    new Gauge({
      name: 'runledger_jobs_waiting_for_version',
      help: 'Jobs ready to run but for a live worker serving their graph and version (a pool or version with no live worker), by graph and version',
      labelNames: ['graph', 'version'],
      registers,
      async collect() {
        const waiting = await ledger.countWaitingForVersion().catch(() => undefined);
        if (!waiting) return;
        // Pairs that stopped waiting must disappear, not keep their last count.
        this.reset();
        for (const w of waiting) this.set({ graph: w.graph, version: w.version ?? '' }, w.count);
      },
    });
    new Gauge({
      name: 'runledger_effects',
      help: 'Effects in the ledger by status (pending = outcome unknown)',
      labelNames: ['status'],
      registers,
      async collect() {
        const counts = await ledgerCounts().catch(() => undefined);
        if (counts) for (const status of EFFECT_STATUSES) this.set({ status }, counts.effects[status] ?? 0);
      },
    });
    new Gauge({
      name: 'runledger_queue_jobs',
      help: 'Deliveries in the BullMQ queue by state (getJobCounts)',
      labelNames: ['state'],
      registers,
      async collect() {
        const counts = await queue.getJobCounts(...QUEUE_STATES).catch(() => undefined);
        for (const [state, n] of Object.entries(counts ?? {})) this.set({ state }, n);
      },
    });
    collectDefaultMetrics({ register: this.registry });
  }
}

/** The status an operator action moves a job to, from its route and body. */
function actionTarget(action: string | undefined, body: unknown): string | undefined {
  if (action === 'cancel') return 'cancelled';
  if (action === 'resume' || action === 'replay') return 'accepted';
  if (action === 'resolve') {
    const outcome = (body as { outcome?: unknown } | undefined)?.outcome;
    return outcome === 'completed' || outcome === 'failed' ? outcome : undefined;
  }
  return undefined;
}

/**
 * Counts admissions and operator transitions from the responses of the routes that make them
 * (the /v1 API and the dashboard), and serves GET /metrics in Prometheus' text format.
 */
export function installMetrics(app: FastifyInstance, metrics: ProducerMetrics): void {
  app.addHook('onResponse', async (request: FastifyRequest, reply: FastifyReply) => {
    const route = request.routeOptions.url;
    if (request.method !== 'POST' || !route) return;
    if (route === '/v1/jobs') {
      const outcome = admissionOutcome(reply.statusCode);
      metrics.admissions.inc({ outcome });
      metrics.admissionSeconds.observe({ outcome }, reply.elapsedTime / 1000);
      if (outcome === 'created') metrics.transitions.inc({ to: 'accepted' });
      return;
    }
    const api = route.startsWith('/v1/jobs/:jobId/') && reply.statusCode === 200;
    const dashboard = route === '/admin/jobs/:jobId/:action' && reply.statusCode === 303;
    if (!api && !dashboard) return;
    const action = api ? route.slice('/v1/jobs/:jobId/'.length) : (request.params as { action?: string }).action;
    const to = actionTarget(action, request.body);
    if (to) metrics.transitions.inc({ to });
  });
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()));
}
