import type { ClaimResult, Ledger } from '@runledger/ledger';
import type { RunLedger } from '@runledger/runtime';

/**
 * Who hears what one delivery's run does, as it happens (the Bull Board view of the delivery).
 * The executor calls it beside its own ledger writes and the graph's, through `runLedgerFor`;
 * hearing never changes the run and must not throw.
 */
export interface RunObserver {
  /** The claim's answer; `limited`: it also took its turn under the graph's rate limit. */
  claimed(claim: ClaimResult, limited: boolean): void;
  /** A busy thread's claim was recorded as waiting for `blockedBy` (null: the thread turned out free). */
  waitingForThread(blockedBy: string | null): void;
  /** A fenced event of the attempt was written (`started`, `resumed`, `node_entered`, `effect_retried`, …). */
  event(type: string, detail: Record<string, unknown>): void;
  effectStarted(effectKey: string, name: string): void;
  effectSettled(effectKey: string, failed: boolean): void;
  /** The fenced saver wrote a checkpoint: a LangGraph superstep. */
  checkpoint(): void;
}

/** An observer that hears nothing: a delivery nobody watches. */
export const UNOBSERVED: RunObserver = {
  claimed: () => {},
  waitingForThread: () => {},
  event: () => {},
  effectStarted: () => {},
  effectSettled: () => {},
  checkpoint: () => {},
};

/** The ledger the attempt's graph sees (RunLedger): each write goes to the ledger, then to the observer once it is recorded. */
export function runLedgerFor(ledger: Ledger, seen: RunObserver): RunLedger {
  return {
    pool: ledger.pool,
    findEffect: (jobId, effectKey) => ledger.findEffect(jobId, effectKey),
    async appendEvent(jobId, token, type, detail = {}) {
      await ledger.appendEvent(jobId, token, type, detail);
      seen.event(type, detail);
    },
    async recordEffectIntent(jobId, token, effectKey, name, idempotencyKey) {
      const effect = await ledger.recordEffectIntent(jobId, token, effectKey, name, idempotencyKey);
      seen.effectStarted(effectKey, name);
      return effect;
    },
    async settleEffect(jobId, token, effectKey, outcome) {
      const effect = await ledger.settleEffect(jobId, token, effectKey, outcome);
      seen.effectSettled(effectKey, 'error' in outcome);
      return effect;
    },
  };
}
