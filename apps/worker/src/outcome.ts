import { isGraphDrained } from '@langchain/langgraph';
import { LeaseLostError } from '@runledger/ledger';

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

/** Retry delay after a failed attempt: exponential from 500 ms, capped at 30 s. */
export function backoffMs(attempt: number): number {
  return Math.min(30_000, 500 * 2 ** Math.max(0, attempt - 1));
}
