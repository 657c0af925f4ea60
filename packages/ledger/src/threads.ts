import { LedgerError } from './errors';

/** The tenant of open mode and of the admin key; its threads keep their ids in LangGraph. */
export const DEFAULT_TENANT = 'default';

/** Tenant names the ledger accepts (as RUNLEDGER_API_KEYS does): never a `/`, so thread ids stay apart. */
const TENANT = /^[A-Za-z0-9_.-]{1,64}$/;

/** Thread ids starting with this are reserved for the ledger's per-tenant LangGraph thread ids. */
export const RESERVED_THREAD_PREFIX = '~';

/**
 * The LangGraph thread id (checkpoint `thread_id`) of a tenant's thread: `threadId` itself for
 * the `default` tenant, `~<tenant>/<threadId>` for any other, so two tenants never share
 * checkpoints whatever ids they choose. SQL has the same function, `langgraph_thread_id`
 * (migration 0005).
 */
export function langGraphThreadId(tenant: string, threadId: string): string {
  return tenant === DEFAULT_TENANT ? threadId : `${RESERVED_THREAD_PREFIX}${tenant}/${threadId}`;
}

/**
 * Refuses an admission whose tenant or thread id could make two tenants' LangGraph thread ids
 * equal. Throws LedgerError INVALID_REQUEST naming the field; nothing is written then.
 */
export function checkThreadKey(tenant: string, threadId: string | undefined): void {
  if (!TENANT.test(tenant)) throw new LedgerError('INVALID_REQUEST', `tenant "${tenant}" must be 1-64 letters, digits, '_', '.' or '-'.`);
  if (threadId?.startsWith(RESERVED_THREAD_PREFIX)) {
    throw new LedgerError(
      'INVALID_REQUEST',
      `threadId must not start with "${RESERVED_THREAD_PREFIX}" (reserved for per-tenant thread ids); choose another thread id.`,
    );
  }
}
