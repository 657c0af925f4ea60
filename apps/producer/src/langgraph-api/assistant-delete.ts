import { isTerminal } from '@runledger/ledger';
import { ApiError } from '../http-errors';
import type { LangGraphDeps } from './context';

/** Most threads one delete_threads request removes (the rest answer 422 before anything goes). */
const MAX_THREADS = 1000;

/**
 * Deletes a tenant's stored assistant with its versions and, with `withThreads`, the tenant's
 * threads whose metadata.assistant_id names it (with their checkpoints; job rows stay). Checks
 * first that none of those threads has a run still open (409, nothing deleted). Throws 404
 * when the assistant is gone.
 */
export async function deleteAssistant(d: LangGraphDeps, tenant: string, assistantId: string, withThreads: boolean): Promise<void> {
  const threads = withThreads ? await d.threads.search({ tenant, metadata: { assistant_id: assistantId }, limit: MAX_THREADS + 1 }) : [];
  if (threads.length > MAX_THREADS)
    throw new ApiError(422, 'invalid_request', `More than ${MAX_THREADS} threads name assistant ${assistantId}; delete some of them first.`);
  const open = threads.find((t) => t.latestJob && !isTerminal(t.latestJob.status));
  if (open) throw new ApiError(409, 'thread_busy', `Thread ${open.threadId} of assistant ${assistantId} has a run that has not finished; cancel it first.`);
  if (!(await d.assistants.store.delete(tenant, assistantId))) throw new ApiError(404, 'not_found', `Assistant not found: ${assistantId}.`);
  for (const t of threads) await d.threads.delete(t.threadId, tenant);
}
