import { createHash } from 'node:crypto';
import { LeaseLostError } from '@runledger/ledger';
import type { RunContext } from './context';

/**
 * What a provider says about an earlier call whose outcome Runledger never recorded:
 * it happened (with its result), it did not happen, or it cannot tell.
 */
export type Reconciliation<T> = { outcome: 'committed'; result: T } | { outcome: 'absent' } | { outcome: 'unknown' };

export interface EffectOptions<T> {
  /** Stable key of this effect within the job, the same on every attempt (for agent tools: `toolEffectKey`). */
  key: string;
  /** What the effect does, for the ledger and for people (`book_car`). */
  name: string;
  /** The provider deduplicates on the idempotency key, so an effect in doubt may be called again. Default false. */
  idempotent?: boolean;
  /** Asks the provider what happened to an earlier call with this idempotency key; used for effects in doubt. */
  reconcile?: (idempotencyKey: string) => Promise<Reconciliation<T>>;
}

/**
 * An earlier attempt recorded the intent to call a provider and never learned the outcome, and
 * the effect is neither idempotent nor reconcilable: calling again could do it twice. The
 * worker stops the job in `manual_reconcile` naming the effect.
 */
export class EffectInDoubtError extends Error {
  readonly code = 'EFFECT_IN_DOUBT';

  constructor(
    readonly effectKey: string,
    readonly effectName: string,
    readonly idempotencyKey: string,
  ) {
    super(
      `Effect ${effectName} (key ${effectKey}) may have reached its provider in an earlier attempt, but its outcome was never recorded, ` +
        `and it is neither idempotent nor reconcilable, so it was not called again. Check the provider for idempotency key ${idempotencyKey}, ` +
        'then resolve the job, or replay it to call the effect again with the same key.',
    );
    this.name = 'EffectInDoubtError';
  }
}

/** The idempotency key handed to the provider for `effectKey` of `jobId`: the same on every attempt. */
export function effectIdempotencyKey(jobId: string, effectKey: string): string {
  return `rl-${createHash('sha256').update(`${jobId}\n${effectKey}`).digest('hex').slice(0, 32)}`;
}

/** The effect key of an agent tool call: thread and the model's `tool_call_id`, stable across attempts and replays. */
export function toolEffectKey(ctx: RunContext, toolCallId: string): string {
  return `${ctx.threadId}:${toolCallId}`;
}

/**
 * Runs an external side effect at most once per key as far as the provider allows, through the
 * effects ledger. A committed effect returns its stored result without calling `fn`; otherwise a
 * fenced intent (`pending`) is recorded, `fn(idempotencyKey)` calls the provider, and the answer
 * is recorded as `committed` (returned, as stored JSON) or `failed` (rethrown; the next attempt
 * calls again). A `pending` row left by a dead attempt is called again only when `idempotent`,
 * or after `reconcile` says nothing happened; when `reconcile` reports the outcome it is recorded
 * without a call. `fn` should throw only when the provider did not act: an error raised while
 * `ctx.signal` is aborted leaves the effect pending, since the call may have gone through.
 * Throws EffectInDoubtError when the outcome is unknown and calling again is unsafe, the
 * signal's reason when `ctx.signal` aborted before the call, and LeaseLostError (unchanged)
 * when the attempt's fencing token is stale or the signal says the lease was lost (then even a
 * provider's answer is not recorded): the run must stop.
 */
export async function effect<T>(ctx: RunContext, options: EffectOptions<T>, fn: (idempotencyKey: string) => Promise<T>): Promise<T> {
  const { ledger, jobId, fencingToken } = ctx;
  const found = await ledger.findEffect(jobId, options.key);
  if (found?.status === 'committed') return found.result as T;
  const idempotencyKey = found?.idempotencyKey ?? effectIdempotencyKey(jobId, options.key);
  if (found?.status === 'pending') {
    const known = await resolveInDoubt(ctx, options, idempotencyKey);
    if (known) return known.result;
  }
  // A run being torn down (lease lost, cancelled, timed out, draining) starts no new provider call.
  ctx.signal.throwIfAborted();
  await ledger.recordEffectIntent(jobId, fencingToken, options.key, options.name, idempotencyKey);
  let result: T;
  try {
    result = await fn(idempotencyKey);
  } catch (err) {
    if (err instanceof LeaseLostError || ctx.signal.aborted) throw err;
    await ledger.settleEffect(jobId, fencingToken, options.key, { error: describe(err) });
    throw err;
  }
  // The worker judged the lease lost while the provider answered: this run writes nothing more.
  // The effect stays pending, and the next attempt settles it as after a crash (same key).
  if (ctx.signal.reason instanceof LeaseLostError) throw ctx.signal.reason;
  const settled = await ledger.settleEffect(jobId, fencingToken, options.key, { result });
  return settled.result as T;
}

/**
 * Decides an effect left `pending`: returns its result when the provider reports it happened,
 * undefined when it may be called again, and throws EffectInDoubtError otherwise.
 */
async function resolveInDoubt<T>(ctx: RunContext, options: EffectOptions<T>, idempotencyKey: string): Promise<{ result: T } | undefined> {
  const { ledger, jobId, fencingToken } = ctx;
  const detail = { effectKey: options.key, name: options.name, idempotencyKey };
  if (options.reconcile) {
    const answer = await options.reconcile(idempotencyKey);
    if (answer.outcome === 'committed') {
      const settled = await ledger.settleEffect(jobId, fencingToken, options.key, { result: answer.result });
      await ledger.appendEvent(jobId, fencingToken, 'effect_reconciled', { ...detail, outcome: 'committed' });
      return { result: settled.result as T };
    }
    if (answer.outcome === 'absent') {
      await ledger.appendEvent(jobId, fencingToken, 'effect_reconciled', { ...detail, outcome: 'absent' });
      return undefined;
    }
  }
  if (options.idempotent) {
    await ledger.appendEvent(jobId, fencingToken, 'effect_retried', detail);
    return undefined;
  }
  throw new EffectInDoubtError(options.key, options.name, idempotencyKey);
}

/** A JSON description of what `fn` threw, for the effect row. */
function describe(err: unknown): Record<string, unknown> {
  const e = err as { name?: string; message?: string; code?: unknown } | undefined;
  return { name: e?.name ?? 'Error', message: e?.message ?? String(err), ...(e?.code === undefined ? {} : { code: e.code }) };
}
