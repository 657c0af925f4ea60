import type { RunControl } from '@langchain/langgraph';
import { type Ledger, registerWorker, retireWorker } from '@runledger/ledger';
import { DELIVERY_LOCK_MS, type DeliveryData, openQueue, openWorker, PeriodicPass, type QueueConfig, Reconciler } from '@runledger/queue';
import type { GraphRegistry } from '@runledger/runtime';
import { type Job as BullJob, DelayedError } from 'bullmq';
import type { DeliveryOutcome } from './delivery-outcome';
import { DeliveryView, readableOutcome } from './delivery-view';
import { type ExecuteDeps, executeDelivery } from './execute';
import { LeaseKeeper } from './lease-keeper';
import { RunAbort } from './outcome';
import { announcement } from './pool';

/** Puts a delivery back in the queue for `delayMs` without a claim (no attempt spent); BullMQ's DelayedError ends its processing. */
async function requeue(bullJob: BullJob<DeliveryData>, token: string, delayMs: number): Promise<never> {
  await bullJob.moveToDelayed(Date.now() + delayMs, token);
  throw new DelayedError();
}

export interface WorkerOptions {
  ledger: Ledger;
  /** The ledger the heartbeats go through, on a connection of their own, so they never wait behind the runs' statements. Default `ledger`. */
  leaseLedger?: Ledger;
  queueConfig: QueueConfig;
  graphs: GraphRegistry;
  workerId: string;
  schema: string;
  /** Jobs run at once by this process. Default 16. */
  concurrency?: number;
  /** Per graph: at most this many of its jobs run at once here (a delivery beyond it waits in the queue). Default no limit but `concurrency`. */
  graphConcurrency?: ReadonlyMap<string, number | undefined>;
  /** Per-attempt run time limit when a job sets none. Default 15 minutes. */
  defaultTimeoutMs?: number;
  /** Heartbeat interval. Default min(lease TTL / 3, 1000 ms), so a cancel is seen within about a second. */
  heartbeatMs?: number;
  /** Reconciler sweep interval. Default 1000 ms. */
  sweepIntervalMs?: number;
  /** Grace before an undelivered accepted job is redelivered. Default 5000 ms. */
  redeliverGraceMs?: number;
  /** Priority aging bound (ReconcilerOptions.priorityAgingMs). Default 0: off; `PRIORITY_AGING_MS` sets 300000. */
  priorityAgingMs?: number;
  /** How long a drain lets the step in flight finish before aborting it. Default 5000 ms. */
  drainGraceMs?: number;
  log?: ExecuteDeps['log'];
  crashAt?: string;
  /** langgraph.json `store`: the index and ttls of the graphs' store. */
  store?: ExecuteDeps['store'];
  /** Called after every delivery (metrics, tests), with when it became due in the queue, started and finished (ms since the epoch). */
  onOutcome?: (jobId: string, outcome: DeliveryOutcome, timing: { queuedAt: number; startedAt: number; finishedAt: number }) => void;
  /** Wraps every delivery (tracing, log context); must call `run` once and return its outcome. Default: just `run`. */
  aroundDelivery?: (jobId: string, run: () => Promise<DeliveryOutcome>) => Promise<DeliveryOutcome>;
}

/** One worker process's moving parts: BullMQ consumer, lease keeper and reconciler. */
export class RunledgerWorker {
  private readonly keeper: LeaseKeeper;
  private readonly reconciler: Reconciler;
  private readonly controls = new Map<string, RunControl>();
  private readonly queue;
  private bull: ReturnType<typeof openWorker> | undefined;
  private readonly deps: ExecuteDeps;

  constructor(private readonly options: WorkerOptions) {
    const log = options.log ?? (() => {});
    const { ledger } = options;
    this.limits = new PeriodicPass(
      () => this.readLimits(),
      options.sweepIntervalMs ?? 1_000,
      () => {},
    );
    const heartbeatMs = options.heartbeatMs ?? Math.min(Math.floor(ledger.leaseTtlMs / 3), 1_000);
    this.keeper = new LeaseKeeper(options.leaseLedger ?? ledger, options.workerId, heartbeatMs, (err) =>
      log('warn', 'heartbeat failed', { error: (err as Error).message }),
    );
    this.queue = openQueue(options.queueConfig);
    this.reconciler = new Reconciler(ledger, this.queue, {
      intervalMs: options.sweepIntervalMs,
      graceMs: options.redeliverGraceMs,
      priorityAgingMs: options.priorityAgingMs,
      log,
    });
    this.deps = {
      ledger,
      queue: this.queue,
      graphs: options.graphs,
      startGraphs: [...options.graphs.keys()],
      serves: announcement(options.graphs).serves,
      keeper: this.keeper,
      workerId: options.workerId,
      schema: options.schema,
      defaultTimeoutMs: options.defaultTimeoutMs ?? 15 * 60_000,
      drainGraceMs: options.drainGraceMs ?? 5_000,
      controls: this.controls,
      limitedGraphs: () => this.limited,
      log,
      crashAt: options.crashAt,
      store: options.store,
    };
  }

  /** Graphs with a rate limit, as last read (every sweep interval). */
  private limited: ReadonlySet<string> = new Set();
  /** Reads the limited graphs every sweep interval, never overlapping a slow read. */
  private readonly limits: PeriodicPass<void>;

  private async readLimits(): Promise<void> {
    this.limited = await this.options.ledger.limits.limited().catch(() => this.limited);
  }

  /** Starts consuming deliveries, heartbeating and sweeping. */
  async start(): Promise<void> {
    await this.limits.runOnce();
    this.limits.start();
    // Announce the graphs and versions served before the first claim, so readers and the
    // reconciler see this worker as serving them.
    await registerWorker(this.options.ledger.pool, this.options.workerId, announcement(this.options.graphs, this.options.graphConcurrency));
    this.keeper.start();
    await this.keeper.beat();
    this.reconciler.start();
    this.bull = openWorker(this.options.queueConfig, (job, token) => this.process(job, token), {
      concurrency: this.options.concurrency ?? 16,
      // BullMQ's lock is only a delivery hint; the Postgres lease decides who runs a job.
      lockDuration: DELIVERY_LOCK_MS,
      maxStalledCount: 1_000,
    });
    this.bull.on('error', (err) => this.deps.log('warn', 'queue error', { error: err.message }));
  }

  /** Deliveries being processed right now (drain waits for them). */
  private readonly inFlight = new Set<Promise<DeliveryOutcome>>();

  /** Deliveries in process per graph (by the delivery's label), for the per-graph limits. */
  private readonly perGraph = new Map<string, number>();

  /** Set when the drain begins: deliveries still handed to this worker go back to the queue unclaimed. */
  private draining = false;

  private async process(bullJob: BullJob<DeliveryData>, token?: string): Promise<DeliveryOutcome> {
    if (this.draining && token) {
      // A fetch that was in flight when the drain began: another worker takes it, no attempt spent.
      return requeue(bullJob, token, 0);
    }
    const graph = bullJob.data.graph;
    const limit = graph === undefined ? undefined : this.options.graphConcurrency?.get(graph);
    const running = graph === undefined ? 0 : (this.perGraph.get(graph) ?? 0);
    if (graph !== undefined && limit !== undefined && running >= limit && token) {
      // The graph's share of this worker is full: back to the queue without a claim (no attempt spent).
      return requeue(bullJob, token, 250);
    }
    if (graph !== undefined) this.perGraph.set(graph, running + 1);
    const work = this.processDelivery(bullJob, token);
    this.inFlight.add(work);
    return work.finally(() => {
      this.inFlight.delete(work);
      if (graph !== undefined) this.perGraph.set(graph, (this.perGraph.get(graph) ?? 1) - 1);
    });
  }

  private async processDelivery(bullJob: BullJob<DeliveryData>, token?: string): Promise<DeliveryOutcome> {
    const { jobId } = bullJob.data;
    const startedAt = Date.now();
    // Bull Board's view of this delivery observes what the run writes to the ledger.
    const view = new DeliveryView(bullJob);
    const deps = { ...this.deps, observer: view };
    const run = () => executeDelivery(deps, jobId, bullJob.data.graph);
    const outcome = await (this.options.aroundDelivery ? this.options.aroundDelivery(jobId, run) : run());
    await view.finish(outcome);
    const queuedAt = bullJob.timestamp + (bullJob.opts.delay ?? 0);
    this.options.onOutcome?.(jobId, outcome, { queuedAt, startedAt, finishedAt: Date.now() });
    if (outcome.outcome === 'refused' && outcome.retryInMs !== undefined && token) {
      // A retry not yet due: wait in the queue until it is (once; a busy thread is not retried here).
      return requeue(bullJob, token, outcome.retryInMs);
    }
    return readableOutcome(outcome);
  }

  /** Runs in flight right now. */
  get activeRuns(): number {
    return this.keeper.size;
  }

  get heartbeatLagMs(): number {
    return this.keeper.lastLagMs;
  }

  /** One reconciler sweep now (CLI `reconcile`, tests). */
  sweepOnce() {
    return this.reconciler.sweepOnce();
  }

  /**
   * Graceful stop: take no new deliveries, ask running graphs to stop at the next step
   * boundary, abort those still busy after the drain grace, release their leases for immediate
   * redelivery, then close. Resolves when everything is closed.
   */
  async drain(): Promise<void> {
    // No new deliveries from here on, before any wait: a delivery taken while the retirement below
    // waited on a slow link used to start a run after the drain had begun (chaos --hosts-apart).
    this.draining = true;
    const closing = this.bull?.close().catch(() => {});
    // Jobs released below must not count this worker as serving them any more.
    await retireWorker(this.options.ledger.pool, this.options.workerId).catch(() => {});
    for (const control of this.controls.values()) control.requestDrain('worker shutting down');
    const grace = setTimeout(() => this.keeper.abortAll(new RunAbort('drain', 'worker shutting down')), this.deps.drainGraceMs);
    try {
      // Our own deliveries end by themselves: drained at a step boundary, or aborted after the grace.
      await Promise.allSettled([...this.inFlight]);
    } finally {
      clearTimeout(grace);
    }
    // BullMQ's close waits on Redis without a limit; with Redis down it would hang the drain.
    let bounded: NodeJS.Timeout | undefined;
    await Promise.race([closing, new Promise((resolve) => (bounded = setTimeout(resolve, 2_000)))]);
    clearTimeout(bounded);
    await this.close();
  }

  /** Stops timers and closes the queue connections (after drain, or in tests). */
  async close(): Promise<void> {
    await this.limits.stop();
    // What this worker served stops counting as served now, not 5 s after its last heartbeat.
    await retireWorker(this.options.ledger.pool, this.options.workerId).catch(() => {});
    this.keeper.stop();
    await this.reconciler.stop();
    await this.bull?.close(true).catch(() => {});
    await this.queue.close().catch(() => {});
  }
}
