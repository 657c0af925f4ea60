import type { JobEvent, Ledger, RetentionReport } from '@runledger/ledger';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { DeliveryOutcome } from './delivery-outcome';

/** When a delivery waited and ran (ms since the epoch), as RunledgerWorker reports it. */
export interface DeliveryTiming {
  /** When the delivery became due in the queue (added, plus its delay). */
  queuedAt: number;
  startedAt: number;
  finishedAt: number;
}

/** Decisions that mean "an earlier attempt did not finish" (ARCHITECTURE.md, Recovery decision). */
const RECOVERY_DECISIONS = new Set(['resume', 'replay', 'manual', 'complete_finished', 'park']);

/** The status a delivery outcome leaves the job in. */
const OUTCOME_STATUS: Partial<Record<DeliveryOutcome['outcome'], string>> = {
  completed: 'completed',
  failed: 'failed',
  interrupted: 'interrupted',
  manual_reconcile: 'manual_reconcile',
  retry: 'recovery_required',
  released: 'recovery_required',
};

const seconds = (ms: number) => Math.max(0, ms) / 1000;
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/** Recovery time of the job's latest claim: from the `recovery_required` before it to the claim (ms), if there was one. */
export function lastRecoveryMs(events: readonly JobEvent[]): number | undefined {
  let claimAt: number | undefined;
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (claimAt === undefined) {
      if (e.type === 'claimed') claimAt = e.at.getTime();
    } else if (e.type === 'claimed') return undefined;
    else if (e.type === 'recovery_required') return claimAt - e.at.getTime();
  }
  return undefined;
}

/**
 * A worker's Prometheus metrics. Fed by RunledgerWorker's `onOutcome` (observeDelivery), the
 * graph wrapper (rejected fenced writes) and the retention task; gauges read the worker when
 * scraped. One registry per worker, so several in one process do not collide.
 */
export class WorkerMetrics {
  readonly registry = new Registry();
  private readonly registers = [this.registry];
  readonly deliveries = new Counter({
    name: 'runledger_deliveries_total',
    help: 'Deliveries handled, by outcome (refused = claim refused)',
    labelNames: ['outcome'],
    registers: this.registers,
  });
  readonly refusedClaims = new Counter({
    name: 'runledger_claims_refused_total',
    help: 'Deliveries whose claim was refused, by reason (thread_busy: the job now waits for its thread without a delivery)',
    labelNames: ['reason'],
    registers: this.registers,
  });
  readonly attempts = new Counter({ name: 'runledger_attempts_total', help: 'Attempts started (claims won)', registers: this.registers });
  readonly transitions = new Counter({
    name: 'runledger_job_transitions_total',
    help: 'Job status transitions made by this process, by new status',
    labelNames: ['to'],
    registers: this.registers,
  });
  readonly recoveries = new Counter({
    name: 'runledger_recoveries_total',
    help: 'Claims of a job whose earlier attempt did not finish, by decision',
    labelNames: ['decision'],
    registers: this.registers,
  });
  readonly leaseLosses = new Counter({
    name: 'runledger_lease_losses_total',
    help: 'Attempts stopped because their lease was lost',
    registers: this.registers,
  });
  readonly rejectedWrites = new Counter({
    name: 'runledger_fenced_writes_rejected_total',
    help: 'Writes refused for a stale fencing token: checkpoint transactions rolled back by the fenced saver, ledger writes refused with LeaseLostError',
    labelNames: ['source'],
    registers: this.registers,
  });
  readonly queueWait = new Histogram({
    name: 'runledger_queue_wait_seconds',
    help: 'From a delivery becoming due in the queue to its claim',
    buckets: LATENCY_BUCKETS,
    registers: this.registers,
  });
  readonly runTime = new Histogram({
    name: 'runledger_run_duration_seconds',
    help: 'Duration of an attempt, by outcome',
    labelNames: ['outcome'],
    buckets: LATENCY_BUCKETS,
    registers: this.registers,
  });
  readonly recoveryTime = new Histogram({
    name: 'runledger_recovery_duration_seconds',
    help: 'From recovery_required to the next claim',
    buckets: LATENCY_BUCKETS,
    registers: this.registers,
  });
  readonly retentionRemoved = new Counter({
    name: 'runledger_retention_removed_total',
    help: 'Rows removed by retention, by table',
    labelNames: ['table'],
    registers: this.registers,
  });

  constructor(private readonly ledger: Ledger) {
    collectDefaultMetrics({ register: this.registry });
  }

  /** Gauges read from the worker at scrape time: heartbeat lag and runs in flight. */
  watch(worker: { readonly heartbeatLagMs: number; readonly activeRuns: number }): void {
    new Gauge({
      name: 'runledger_heartbeat_lag_seconds',
      help: 'Lateness of the last heartbeat beyond its interval',
      registers: this.registers,
      collect() {
        this.set(seconds(worker.heartbeatLagMs));
      },
    });
    new Gauge({
      name: 'runledger_active_runs',
      help: 'Runs in flight in this worker',
      registers: this.registers,
      collect() {
        this.set(worker.activeRuns);
      },
    });
  }

  /** Records one delivery (RunledgerWorker's onOutcome). Recovery time is read from the job's timeline; a failed read is skipped. */
  observeDelivery(jobId: string, outcome: DeliveryOutcome, timing?: DeliveryTiming): void {
    this.deliveries.inc({ outcome: outcome.outcome });
    if (outcome.outcome === 'refused') {
      this.refusedClaims.inc({ reason: outcome.reason });
      return;
    }
    this.attempts.inc();
    this.transitions.inc({ to: 'running' });
    const to = OUTCOME_STATUS[outcome.outcome];
    if (to) this.transitions.inc({ to });
    if (outcome.outcome === 'lease_lost') this.leaseLosses.inc();
    if (timing) {
      this.queueWait.observe(seconds(timing.startedAt - timing.queuedAt));
      this.runTime.observe({ outcome: outcome.outcome }, seconds(timing.finishedAt - timing.startedAt));
    }
    if (outcome.decision && RECOVERY_DECISIONS.has(outcome.decision)) {
      this.recoveries.inc({ decision: outcome.decision });
      this.ledger.events(jobId).then(
        (events) => {
          const ms = lastRecoveryMs(events);
          if (ms !== undefined) this.recoveryTime.observe(seconds(ms));
        },
        () => {},
      );
    }
  }

  /** Counts what a retention pass removed. */
  observeRetention(report: RetentionReport): void {
    const removed = {
      checkpoints: report.checkpoints,
      checkpoint_blobs: report.checkpointBlobs,
      checkpoint_writes: report.checkpointWrites,
      job_events: report.jobEvents,
      jobs: report.jobsDeleted,
      effects: report.effects,
      run_stream_events: report.streamEvents,
      webhook_deliveries: report.webhookDeliveries,
      cron_firings: report.cronFirings,
    };
    for (const [table, n] of Object.entries(removed)) if (n > 0) this.retentionRemoved.inc({ table }, n);
  }
}
