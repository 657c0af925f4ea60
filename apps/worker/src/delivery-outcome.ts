import type { DatabaseStop } from './outcome';
import type { Decision } from './recovery';

/** What happened to one delivery; for logs, metrics and the BullMQ return value. */
export type DeliveryOutcome =
  | { outcome: 'refused'; reason: string; retryInMs?: number; blockedBy?: string; waitsFor?: string }
  | {
      /**
       * `database_unreachable` / `database_disk_full`: PostgreSQL could not be reached, or refused
       * a write for lack of disk, so the run stopped without a further write; its lease expires and
       * the reconciler recovers it, as after `lease_lost`.
       */
      outcome: 'completed' | 'failed' | 'interrupted' | 'manual_reconcile' | 'retry' | 'released' | 'lease_lost' | DatabaseStop;
      decision?: Decision['action'];
      /** The job ended while other jobs of its thread are unfinished: deliver the next one. */
      handOff?: boolean;
      /** `manual_reconcile`: why a person is needed; `released`: why the job was handed back. */
      reason?: string;
      /** `retry`: when the next attempt is delivered. */
      retryInMs?: number;
    };
