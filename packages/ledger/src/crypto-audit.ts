import { isSealedType } from './checkpoint-seal';
import { isSealedEnvelope } from './crypto';
import type { Queryable } from './db';
import { run } from './sql';

/** A job's payload columns as PostgreSQL holds them: sealed envelopes when encryption is on. */
export interface StoredPayloads {
  input: unknown;
  result: unknown;
  interrupt: unknown;
  resumeValue: unknown;
  /** Every event's detail, oldest first (an interrupt or a resume value in one is sealed on its own). */
  eventDetails: Array<Record<string, unknown>>;
  effects: Array<{ effectKey: string; result: unknown }>;
  /** Channel values and pending writes of the job's thread: LangGraph's type (`sealed:…` when sealed) and the bytes as text. */
  checkpoints: Array<{ type: string; bytes: string }>;
}

/**
 * Reads a job's input, result and effect results without decrypting them, to check encryption at
 * rest (`isSealedEnvelope` tells a sealed value). Returns undefined when the job does not exist;
 * throws LedgerError DATABASE_UNAVAILABLE when PostgreSQL cannot be reached.
 */
export async function readStoredPayloads(db: Queryable, jobId: string): Promise<StoredPayloads | undefined> {
  const row = (await run(db, 'read_stored_payloads', [jobId])).rows[0];
  if (!row) return undefined;
  const { input, result, interrupt, resume_value: resumeValue, event_details: eventDetails, effects, checkpoints } = row;
  return { input, result, interrupt, resumeValue, eventDetails, effects, checkpoints };
}

/** True when every non-null payload of `stored` is a sealed envelope and every checkpoint value is sealed. */
export function isFullySealed(stored: StoredPayloads): boolean {
  const values = [stored.input, stored.result, stored.interrupt, stored.resumeValue, ...stored.effects.map((e) => e.result)].filter((v) => v !== null);
  return values.every(isSealedEnvelope) && stored.checkpoints.every((c) => isSealedType(c.type));
}
