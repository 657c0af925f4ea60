import { INTERRUPT, RunControl, type StateSnapshot } from '@langchain/langgraph';
import { type ClaimResult, FencedPostgresSaver, type Job, type Ledger, LedgerStore, langGraphThreadId } from '@runledger/ledger';
import { bestEffort, type DeliveryData, deliver, handOffThread } from '@runledger/queue';
import {
  breakpointsOf,
  commandOf,
  forkOf,
  type GraphRegistry,
  invokeOptionsOf,
  type RunContext,
  type RunLedger,
  type RunnableGraph,
  runRequestOf,
  type StoreConfig,
} from '@runledger/runtime';
import type { Queue } from 'bullmq';
import type { DeliveryOutcome } from './delivery-outcome';
import type { LeaseKeeper } from './lease-keeper';
import { backoffMs, classify, databaseStop, describeError, deterministicFailure, errorLogFields, RunAbort, STOP_WORDS } from './outcome';
import { attemptsExhausted, type Decision, decide, pendingInterrupts } from './recovery';
import { type RunObserver, runLedgerFor, UNOBSERVED } from './run-observer';
import { runGraph } from './stream-run';

export interface ExecuteDeps {
  ledger: Ledger;
  queue: Queue<DeliveryData>;
  graphs: GraphRegistry;
  keeper: LeaseKeeper;
  workerId: string;
  schema: string;
  /** Per-attempt run time limit when the job sets none. */
  defaultTimeoutMs: number;
  /** How long a drain waits for the step in flight before aborting it. */
  drainGraceMs: number;
  /** Controls of the runs in flight, so a drain can reach them. */
  controls: Map<string, RunControl>;
  log: (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;
  /** Graphs with a rate limit (graph_limits), refreshed every sweep: their jobs are claimed with `claimLimited`. */
  limitedGraphs?: () => ReadonlySet<string>;
  /** Graphs whose first attempt the claim itself records as `started` (the names in `graphs`). */
  startGraphs?: readonly string[];
  /** graphVersionKey of each graph and version this worker serves: a claim of any other job is refused (`not_served`). Default any. */
  serves?: readonly string[];
  /** Test hook: SIGKILL this process at a named point (RUNLEDGER_TEST_CRASH_AT). */
  crashAt?: string;
  /** Hears what the delivery's run does (its Bull Board view). Default none. */
  observer?: RunObserver;
  /** langgraph.json `store` (index, ttls) for the graphs' `getStore()`. */
  store?: StoreConfig;
}

/** Added to a GraphRecursionError's message: LangGraph names the invoke option, an API client sets the config key. */
const RECURSION_HINT = "Over the API: config.recursion_limit of the run or of its assistant (LangGraph's default is 25).";

/** Claims a thread_busy refusal may retry at once, when the thread turned out free meanwhile. */
const CLAIM_ROUNDS = 3;

/**
 * How long a job this worker does not serve waits before its next delivery, when another live
 * worker serves it: all workers share one queue, so the next delivery may reach a non-serving
 * worker again; the pause bounds such hand-backs to a few per second per job.
 */
const HAND_BACK_DELAY_MS = 200;

/** Redelivers a job through the queue, after `delayMs`. Best effort: the reconciler covers a failure. */
export async function redeliver(deps: Pick<ExecuteDeps, 'ledger' | 'queue' | 'log'>, jobId: string, delayMs = 0): Promise<void> {
  const work = deps.ledger.get(jobId).then((job) => deliver(deps.queue, deps.ledger, job, delayMs));
  await bestEffort(work, undefined, (why) => deps.log('warn', 'redelivery failed; the reconciler will deliver', { jobId, ...why }));
}

/**
 * The LangGraph config naming the job's thread: the thread of its tenant (`langGraphThreadId`),
 * so two tenants' threads of the same id never share checkpoints.
 */
function threadOf(job: Job): { configurable: { thread_id: string } } {
  return { configurable: { thread_id: langGraphThreadId(job.tenant, job.threadId) } };
}

function crashHere(deps: ExecuteDeps, point: string): void {
  if (deps.crashAt === point) process.kill(process.pid, 'SIGKILL');
}

/**
 * Claims a job, or says why not. A job whose thread another job holds is recorded as waiting for
 * it and its delivery is dropped, never retried on a timer: a thread can stay parked for days.
 * The holder's end delivers the next job (handOffThread); the reconciler is the safety net.
 */
async function claimOrWait(
  deps: ExecuteDeps,
  jobId: string,
  graph?: string,
): Promise<(Extract<ClaimResult, { ok: true }> & { sentAt: number }) | DeliveryOutcome> {
  const { ledger, workerId } = deps;
  // A limited graph's claim also takes its turn under the limit (a transaction on the limit row).
  const limited = graph !== undefined && deps.limitedGraphs?.().has(graph) === true;
  for (let round = 1; ; round++) {
    const sentAt = Date.now();
    // One statement: the claim, its `claimed` event and, on a first attempt of a graph this worker
    // runs, the `started` decision; it also tells whether pending effects need reading.
    const options = { startGraphs: deps.startGraphs, serves: deps.serves };
    const claim = limited
      ? await ledger.claimLimited(jobId, workerId, ledger.leaseTtlMs, options)
      : await ledger.claim(jobId, workerId, ledger.leaseTtlMs, options);
    deps.observer?.claimed(claim, limited);
    if (claim.ok) return { ...claim, sentAt };
    if (claim.reason === 'not_served') return handBack(deps, jobId);
    // Not due yet, or held back by its graph's limit: the delivery waits in the queue (delayed), never failed.
    if (claim.reason === 'not_due' || claim.reason === 'rate_limited')
      return { outcome: 'refused', reason: claim.reason, retryInMs: Math.max(50, claim.dueInMs ?? 0) };
    if (claim.reason !== 'thread_busy') return { outcome: 'refused', reason: claim.reason };
    const blockedBy = await ledger.waitForThread(jobId);
    deps.observer?.waitingForThread(blockedBy);
    // Null: the holder ended between the two statements (claim again), or the job moved on.
    if (blockedBy !== null || round === CLAIM_ROUNDS) return { outcome: 'refused', reason: claim.reason, blockedBy: blockedBy ?? undefined };
  }
}

/**
 * A job of a graph or version this worker does not serve (no attempt spent: the claim changed
 * nothing). It is delivered again for a live worker that serves it; with none, its delivery is
 * dropped and it waits (`waiting_for_version`, and `versionServed: false` on reads) until the
 * reconciler sees one live.
 */
async function handBack(deps: ExecuteDeps, jobId: string): Promise<DeliveryOutcome> {
  const waiting = await deps.ledger.waitForVersion(jobId);
  if (!waiting) return { outcome: 'refused', reason: 'not_served' };
  const waitsFor = `${waiting.graph}@${waiting.version ?? '*'}`;
  if (waiting.served) await redeliver(deps, jobId, HAND_BACK_DELAY_MS);
  return { outcome: 'refused', reason: 'not_served', waitsFor };
}

/** Delivers the next job of a thread this job ended on. Best effort: the reconciler covers a failure. */
async function handOff(deps: ExecuteDeps, job: Job): Promise<void> {
  const { jobId, threadId } = job;
  await bestEffort(handOffThread(deps.queue, deps.ledger, job), undefined, (why) =>
    deps.log('warn', 'thread hand-off failed; the reconciler will deliver the next job', { jobId, threadId, ...why }),
  );
}

/** Claims a job and runs, resumes, replays or parks it per the recovery table. */
export async function executeDelivery(deps: ExecuteDeps, jobId: string, graph?: string): Promise<DeliveryOutcome> {
  const claim = await claimOrWait(deps, jobId, graph);
  if (!('ok' in claim)) return claim;
  const job = claim.job;
  const token = job.fencingToken;
  const log = (level: 'info' | 'warn' | 'error', msg: string, f: Record<string, unknown> = {}) =>
    deps.log(level, msg, { jobId, threadId: job.threadId, attempt: job.attempt, token, ...f });
  crashHere(deps, 'after_claim');
  const controller = deps.keeper.hold(jobId, token, claim.sentAt);
  const control = new RunControl();
  deps.controls.set(jobId, control);
  const timeoutMs = job.timeoutMs ?? deps.defaultTimeoutMs;
  const timer = setTimeout(() => controller.abort(new RunAbort('timeout', `Attempt ${job.attempt} exceeded its time limit of ${timeoutMs} ms.`)), timeoutMs);
  let outcome: DeliveryOutcome;
  try {
    outcome = await runClaimed(deps, claim, controller.signal, control, log);
  } finally {
    clearTimeout(timer);
    deps.controls.delete(jobId);
    deps.keeper.release(jobId);
  }
  if ('handOff' in outcome && outcome.handOff) await handOff(deps, job);
  return outcome;
}

/** A claimed job with what the claim statement already did or learnt (started, pending effects, an empty thread). */
type Claimed = Pick<Extract<ClaimResult, { ok: true }>, 'job' | 'started' | 'mayHavePendingEffects' | 'threadEmpty'>;

async function runClaimed(deps: ExecuteDeps, claimed: Claimed, signal: AbortSignal, control: RunControl, log: ExecuteDeps['log']): Promise<DeliveryOutcome> {
  const { ledger } = deps;
  const { job } = claimed;
  const { jobId, fencingToken: token } = job;
  const def = deps.graphs.get(job.graph);
  if (!def) {
    const end = await ledger.fail(jobId, token, {
      code: 'unknown_graph',
      message: `No graph named "${job.graph}" is registered in this worker (check RUNLEDGER_GRAPHS).`,
    });
    return { outcome: 'failed', handOff: end.otherJobsOnThread };
  }
  // Before the graph is built: a claim past the last attempt ends the job whatever its graph does here.
  const exhausted = attemptsExhausted(job);
  if (exhausted) {
    log('info', 'decision: fail (attempts exhausted)');
    return await endAttempt(signal, async () => {
      const end = await ledger.fail(jobId, token, exhausted.error);
      return { outcome: 'failed', decision: exhausted.action, handOff: end.otherJobsOnThread };
    });
  }
  // A fresh thread (the claim found no checkpoint on it): LangGraph's first read is skipped.
  const emptyThread = claimed.threadEmpty ? threadOf(job).configurable.thread_id : undefined;
  const { observer } = deps;
  const onCheckpoint = observer ? () => observer.checkpoint() : undefined;
  const saver = new FencedPostgresSaver(ledger, { jobId, fencingToken: token }, { schema: deps.schema, emptyThread, onCheckpoint });
  let graph: RunnableGraph;
  let state: StateSnapshot | undefined;
  try {
    graph = def.build(saver);
    state = job.firstCheckpointAt ? await graph.getState(threadOf(job)) : undefined;
  } catch (err) {
    const stop = databaseStop(err);
    if (stop) {
      // PostgreSQL is out of reach or out of disk (the state read goes through it): not the graph's
      // fault, and no write can land, the attempt's end included. Stop; the lease expires and the
      // reconciler recovers the job, as after any lost lease.
      log('warn', `${STOP_WORDS[stop]} while reading the thread; stopping without further writes`, { error: describeError(err).message });
      return { outcome: stop };
    }
    // The graph cannot be built or read on this worker (a throwing build, a module that fails to
    // load): the attempt ends in the ledger like a failed run, so the job is retried and then
    // fails with the reason, instead of waiting for its lease to expire and being claimed again.
    const error: Record<string, unknown> = { ...describeError(err), code: 'graph_unavailable', graph: job.graph, attempt: job.attempt };
    log('error', 'graph unavailable on this worker', { graph: job.graph, error: error.message });
    return await endAttempt(signal, () => failAttempt(deps, job, error, log));
  }
  const runLedger = runLedgerFor(ledger, observer ?? UNOBSERVED);
  const ctx: RunContext = { jobId, threadId: job.threadId, fencingToken: token, attempt: job.attempt, ledger: runLedger, signal };
  // outputKeys: invoke returns the same channels getState reads as `values` (settle uses them).
  const outputKeys = stateKeys(graph);
  // The run's stored config, context and breakpoints, the same at every attempt (and resume).
  const run = runRequestOf(job.metadata);
  const asked = invokeOptionsOf(run);
  const config = {
    ...asked,
    // Last, so no stored key can replace the job's thread or Runledger's run context.
    configurable: { ...asked.configurable, ...threadOf(job).configurable, runledger: ctx },
    // The tenant's long-term memory (`getStore()`), fenced like the checkpoints; it takes the place of a store the graph was compiled with.
    store: new LedgerStore(ledger.pool, { tenant: job.tenant, fence: { jobId, fencingToken: token }, index: deps.store?.index, ttl: deps.store?.ttl }),
    signal,
    control,
    durability: 'sync',
    outputKeys,
    ...breakpointsOf(run),
  };
  const readEffects = !job.firstCheckpointAt && claimed.mayHavePendingEffects;
  const decision = decide(job, readEffects ? await ledger.pendingEffects(jobId) : [], state);
  log('info', `decision: ${decision.action}`);
  if (claimed.started && decision.action !== 'start') log('error', `the claim recorded started but the decision is ${decision.action}`);
  try {
    const applied = await applyDecision(deps, job, decision, graph.getState.bind(graph), claimed.started, runLedger);
    if ('done' in applied) return applied.done;
    // A fork starts at the checkpoint it asked for until it has one of its own (then it resumes from its newest).
    if (decision.action === 'start' || decision.action === 'replay') Object.assign(config.configurable, forkOf(runRequestOf(job.metadata)));
    const output = await runGraph(ledger, job, graph, applied.input, config);
    crashHere(deps, 'after_invoke');
    return await settle(deps, job, graph, decision, outputKeys === undefined ? undefined : output);
  } catch (err) {
    return await handleFailure(deps, job, err, signal, graph, log, decision, saver);
  }
}

/** What a job's graph starts with: its input, or the Command a LangGraph API run asked for instead. */
function startInput(job: Job): unknown {
  const command = runRequestOf(job.metadata)?.command;
  return command ? commandOf(command) : job.input;
}

/** Records the decision; returns the invoke input, or how the attempt ended when the decision ended it. */
async function applyDecision(
  deps: ExecuteDeps,
  job: Job,
  d: Decision,
  getState: RunnableGraph['getState'],
  startRecorded: boolean,
  /** The attempt's RunLedger: its decision events are heard by the delivery's observer too. */
  events: RunLedger,
): Promise<{ input: unknown } | { done: DeliveryOutcome }> {
  const { ledger } = deps;
  const { jobId, fencingToken: token } = job;
  switch (d.action) {
    case 'start':
      if (!startRecorded) await events.appendEvent(jobId, token, 'started', {});
      return { input: startInput(job) };
    case 'replay':
      await events.appendEvent(jobId, token, 'replayed', { reason: d.reason });
      return { input: startInput(job) };
    case 'resume':
      await events.appendEvent(jobId, token, 'resumed', { reason: d.reason });
      return { input: null };
    case 'resume_command':
      await events.appendEvent(jobId, token, 'resumed', { reason: 'resume_request' });
      return { input: commandOf(d.command, d.resume) };
    case 'park':
      await ledger.park(jobId, token, d.interrupts);
      return { done: { outcome: 'interrupted', decision: d.action } };
    case 'complete_finished': {
      const state = await getState(threadOf(job));
      const end = await ledger.complete(jobId, token, state.values ?? null, { decision: 'already_finished' });
      return { done: { outcome: 'completed', decision: d.action, handOff: end.otherJobsOnThread } };
    }
    case 'manual':
      await ledger.requireManual(jobId, token, d.reason, { effects: d.effects });
      return { done: { outcome: 'manual_reconcile', decision: d.action, reason: d.reason } };
    case 'fail': {
      const end = await ledger.fail(jobId, token, d.error);
      return { done: { outcome: 'failed', decision: d.action, handOff: end.otherJobsOnThread } };
    }
  }
}

/**
 * The channels a LangGraph graph's `getState` returns as `values` (`streamChannelsAsIs`), when
 * they are a list (values an object, which carries `__interrupt__`); otherwise undefined (a single
 * channel, or a wrapper that does not pass them on: RunnableGraph.streamChannelsAsIs).
 */
function stateKeys(graph: RunnableGraph): string[] | undefined {
  const keys = graph.streamChannelsAsIs;
  return Array.isArray(keys) && keys.every((k) => typeof k === 'string') ? keys : undefined;
}

/**
 * After a clean invoke: park on interrupts, otherwise record the final state as the result.
 * `output` is invoke's result read with `outputKeys` = the state's channels. With `durability:
 * 'sync'` it is the values of the final checkpoint, already saved (fenced) when invoke returns;
 * a run that returned without an interrupt (`__interrupt__`, also set for a static breakpoint)
 * has no task left, so the state is not read back. Otherwise it is read as before.
 */
async function settle(deps: ExecuteDeps, job: Job, graph: RunnableGraph, d: Decision, output?: unknown): Promise<DeliveryOutcome> {
  if (typeof output === 'object' && output !== null && !(INTERRUPT in output)) {
    const end = await deps.ledger.complete(job.jobId, job.fencingToken, output);
    return { outcome: 'completed', decision: d.action, handOff: end.otherJobsOnThread };
  }
  const state = await graph.getState(threadOf(job));
  const interrupts = pendingInterrupts(state);
  // Tasks left after a clean return: interrupts, or a static breakpoint (none; a resume continues it).
  if (interrupts.length > 0 || state.next.length > 0) {
    await deps.ledger.park(job.jobId, job.fencingToken, interrupts);
    return { outcome: 'interrupted', decision: d.action };
  }
  const end = await deps.ledger.complete(job.jobId, job.fencingToken, state.values ?? null);
  return { outcome: 'completed', decision: d.action, handOff: end.otherJobsOnThread };
}

async function handleFailure(
  deps: ExecuteDeps,
  job: Job,
  err: unknown,
  signal: AbortSignal,
  graph: RunnableGraph,
  log: ExecuteDeps['log'],
  d: Decision,
  saver: FencedPostgresSaver,
): Promise<DeliveryOutcome> {
  const { ledger } = deps;
  const { jobId, fencingToken: token } = job;
  const failure = classify(err, signal);
  try {
    switch (failure.kind) {
      case 'lease_lost':
        log('warn', 'lease lost; stopping without further writes', { reason: failure.error.message, rejectedCheckpointWrites: saver.rejectedWrites });
        return { outcome: 'lease_lost', decision: d.action };
      case 'drained':
        await ledger.release(jobId, token, 'drained');
        await redeliver(deps, jobId);
        return { outcome: 'released', decision: d.action, reason: 'drained' };
      case 'effect_in_doubt':
        await ledger.requireManual(jobId, token, 'effect_in_doubt', {
          effect: failure.error.effectName,
          effectKey: failure.error.effectKey,
          message: failure.error.message,
        });
        return { outcome: 'manual_reconcile', decision: d.action, reason: 'effect_in_doubt' };
      case 'error': {
        const stop = databaseStop(err);
        if (stop) {
          log('warn', `${STOP_WORDS[stop]} during the run; stopping without further writes`, { error: failure.error.message });
          return { outcome: stop, decision: d.action };
        }
        const node = await failedNode(graph, job);
        const error: Record<string, unknown> = { ...failure.error, node, attempt: job.attempt };
        const deterministic = deterministicFailure(err, node);
        if (!deterministic) return await failAttempt(deps, job, error, log, d.action);
        // Another attempt would fail the same way: the job fails now, its attempts unspent.
        log('warn', 'attempt failed with an error no retry can fix; the job fails', { ...errorLogFields(error), deterministic });
        const message = deterministic === 'recursion_limit' ? `${String(error.message).split('\n')[0]} ${RECURSION_HINT}` : error.message;
        const end = await ledger.fail(jobId, token, { ...error, message, deterministic });
        return { outcome: 'failed', decision: d.action, handOff: end.otherJobsOnThread };
      }
    }
  } catch (inner) {
    if (classify(inner, signal).kind === 'lease_lost') return { outcome: 'lease_lost', decision: d.action };
    throw inner;
  }
}

/** Ends a failed attempt: the job fails once its attempts are spent, otherwise it is retried after a backoff. */
async function failAttempt(
  deps: ExecuteDeps,
  job: Job,
  error: Record<string, unknown>,
  log: ExecuteDeps['log'],
  decision?: Decision['action'],
): Promise<DeliveryOutcome> {
  const { ledger } = deps;
  const { jobId, fencingToken: token } = job;
  if (job.attempt >= job.maxAttempts) {
    const end = await ledger.fail(jobId, token, { ...error, attemptsExhausted: true });
    return { outcome: 'failed', decision, handOff: end.otherJobsOnThread };
  }
  const delay = backoffMs(job.attempt);
  await ledger.retryLater(jobId, token, error, delay);
  await redeliver(deps, jobId, delay);
  log('warn', `attempt failed; retrying in ${delay} ms`, errorLogFields(error));
  return { outcome: 'retry', decision, retryInMs: delay };
}

/** Runs an attempt's ending write; a lost lease means another claim owns the job now. */
async function endAttempt(signal: AbortSignal, write: () => Promise<DeliveryOutcome>): Promise<DeliveryOutcome> {
  try {
    return await write();
  } catch (err) {
    if (classify(err, signal).kind === 'lease_lost') return { outcome: 'lease_lost' };
    throw err;
  }
}

/** The node whose task recorded an error on the LangGraph thread's current state, when LangGraph kept one. */
async function failedNode(graph: RunnableGraph, job: Job): Promise<string | null> {
  try {
    const state = await graph.getState(threadOf(job));
    return state.tasks.find((t) => t.error)?.name ?? null;
  } catch {
    return null;
  }
}
