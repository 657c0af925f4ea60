import type pg from 'pg';
import type { PayloadCodec } from './crypto';
import { checkSchemaName, type Queryable } from './db';
import { LedgerError } from './errors';
import { Ledger } from './ledger';
import { run } from './sql';
import type { AdmitRequest, AdmitResult } from './types';

/**
 * Admits a job on the caller's own client, inside the caller's open transaction (after BEGIN),
 * so the admission commits or rolls back with the caller's writes. The ledger's statements are
 * unqualified, so `search_path` is switched to `schema` with SET LOCAL for the duration and the
 * previous value restored afterwards. No queue message is sent: the worker's reconciler delivers
 * the job once the transaction has committed.
 * Throws an Error when `client` is not inside a transaction, LedgerError (MIGRATION_FAILED) when
 * `schema` does not exist, and the ledger's usual errors (IdempotencyConflictError, ThreadBusyError).
 * With `codec` the input is sealed at rest, as the producer's ledger seals it.
 */
export async function admitInTransaction(client: Queryable, request: AdmitRequest, schema = 'public', codec?: PayloadCodec): Promise<AdmitResult> {
  checkSchemaName(schema);
  const previous = (await run(client, 'read_search_path')).rows[0]?.search_path as string;
  await run(client, 'set_local_search_path', [`${schema}, public`]);
  let failed = false;
  try {
    // Outside a transaction SET LOCAL lasts for its own statement only: the marker is gone by now.
    const now = (await run(client, 'read_search_path')).rows[0];
    if (now?.marker !== 'yes') throw new Error('admitInTransaction needs a client inside an open transaction: call BEGIN first.');
    if (now.current_schema !== schema) {
      throw new LedgerError('MIGRATION_FAILED', `admitInTransaction: schema "${schema}" does not exist; run the migrations for it first.`);
    }
    // Every call passes `client`, so this Ledger never touches a pool of its own.
    return await new Ledger(client as unknown as pg.Pool, { crypto: codec }).admit(request, client);
  } catch (err) {
    failed = true;
    throw err;
  } finally {
    // After a failed statement the transaction is aborted and its ROLLBACK restores the path anyway.
    await run(client, 'set_local_search_path', [previous]).catch((err) => {
      if (!failed) throw err;
    });
  }
}
