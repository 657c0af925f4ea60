import { getRetryable } from '@langchain/core/errors';
import { isGraphDrained } from '@langchain/langgraph';
import { isConnectionError, isDiskFullError, LeaseLostError } from '@runledger/ledger';

/** Why a run was aborted: the abort reasons a worker sets on a run's signal. */
export class RunAbort extends Error {
  constructor(
    readonly kind: 'drain' | 'timeout',
    message: string,
  ) {
    super(message);
    this.name = 'RunAbort';
  }
}

/** The effects API's EffectInDoubtError, matched by name so this module does not depend on the effects API. */
interface EffectInDoubt extends Error {
  effectKey: string;
  effectName: string;
}

const isEffectInDoubt = (e: unknown): e is EffectInDoubt => (e as Error | undefined)?.name === 'EffectInDoubtError';

/** How an invoke that threw ends, in ledger terms. */
export type Failure =
  | { kind: 'lease_lost'; error: LeaseLostError }
  | { kind: 'drained' }
  | { kind: 'effect_in_doubt'; error: EffectInDoubt }
  | { kind: 'error'; error: Record<string, unknown> };

/** A JSON description of an error for the ledger: message, code, and the node when known. */
export function describeError(err: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const e = err as { name?: string; message?: string; code?: string; lc_error_code?: string } | undefined;
  return { name: e?.name ?? 'Error', message: e?.message ?? String(err), code: e?.code ?? e?.lc_error_code ?? 'graph_error', ...extra };
}

/** Classifies what `graph.invoke` threw, looking through the signal's abort reason. */
export function classify(err: unknown, signal: AbortSignal): Failure {
  const reason = signal.aborted ? signal.reason : undefined;
  if (err instanceof LeaseLostError) return { kind: 'lease_lost', error: err };
  if (reason instanceof LeaseLostError) return { kind: 'lease_lost', error: reason };
  if (isGraphDrained(err) || (reason instanceof RunAbort && reason.kind === 'drain')) return { kind: 'drained' };
  if (reason instanceof RunAbort && reason.kind === 'timeout')
    return { kind: 'error', error: { name: 'TimeoutError', message: reason.message, code: 'timeout' } };
  const inner = findCause(err, (c) => isEffectInDoubt(c) || c instanceof LeaseLostError);
  if (isEffectInDoubt(inner)) return { kind: 'effect_in_doubt', error: inner };
  if (inner instanceof LeaseLostError) return { kind: 'lease_lost', error: inner };
  return { kind: 'error', error: describeError(err) };
}

/** The first error in `err`'s cause chain (itself included, 8 deep at most) that `match` accepts. */
export function findCause(err: unknown, match: (e: unknown) => boolean): unknown {
  for (let e = err, depth = 0; e && depth < 8; e = (e as { cause?: unknown }).cause, depth++) if (match(e)) return e;
  return undefined;
}

/**
 * Why an error fails the same way at every attempt, or undefined when another attempt may
 * succeed. Such an error fails the job at once: the recursion limit (the same input loops the
 * same steps), a message LangChain cannot coerce, the graph's input or context schema refusing
 * the run's values (a zod error raised outside the nodes: `node` null), or an error its thrower
 * marked not retryable (LangChain's `stampRetryable(err, false)`).
 */
export function deterministicFailure(err: unknown, node: string | null): string | undefined {
  const e = err as { name?: string; lc_error_code?: string } | undefined;
  if (e?.name === 'GraphRecursionError' || e?.lc_error_code === 'GRAPH_RECURSION_LIMIT') return 'recursion_limit';
  if (e?.lc_error_code === 'MESSAGE_COERCION_FAILURE') return 'invalid_message';
  if (node === null && (e?.name === 'ZodError' || e?.name === '$ZodError')) return 'invalid_input';
  if (getRetryable(err) === false) return 'not_retryable';
  return undefined;
}

/**
 * What a log line says of a graph's error: its name, code and node, never its message (LangChain
 * errors quote the value they refused: a message's content, a tool's arguments).
 */
export function errorLogFields(error: Record<string, unknown>): Record<string, unknown> {
  return { errorName: error.name, errorCode: error.code, node: error.node ?? undefined };
}

/** Retry delay after a failed attempt: exponential from 500 ms, capped at 30 s. */
export function backoffMs(attempt: number): number {
  return Math.min(30_000, 500 * 2 ** Math.max(0, attempt - 1));
}

/** Why a run stopped on PostgreSQL's side rather than its own. */
export type DatabaseStop = 'database_unreachable' | 'database_disk_full';

export const STOP_WORDS: Record<DatabaseStop, string> = {
  database_unreachable: 'PostgreSQL unreachable',
  database_disk_full: "PostgreSQL's disk is full (53100)",
};

/**
 * Whether the error (or one it wraps) says PostgreSQL could not be reached, or that its disk is
 * full. Then no write of the attempt can land, its end included (each statement either commits
 * whole or not at all, so no checkpoint is half-written): the run stops, its lease expires and
 * the reconciler recovers the job once PostgreSQL takes writes again, as after a lost lease. An
 * outage or a full disk is not counted as the graph failing.
 */
export function databaseStop(err: unknown): DatabaseStop | undefined {
  if (findCause(err, isConnectionError) !== undefined) return 'database_unreachable';
  if (findCause(err, isDiskFullError) !== undefined) return 'database_disk_full';
  return undefined;
}
