import type { FastifyRequest } from 'fastify';
import { handOffWithin } from '../delivery';
import { tenantScope } from '../security';
import type { LangGraphDeps } from './context';

/**
 * Cancels a run (its job) for the caller's tenant, then hands its thread on to the next run that
 * waits for it, as the /v1 cancel does (the reconciler covers a queue outage). Throws the
 * ledger's errors (a finished run: InvalidTransitionError).
 */
export async function cancelRun(d: LangGraphDeps, request: FastifyRequest, runId: string, note: string): Promise<void> {
  const job = await d.ledger.cancel(runId, tenantScope(request), note);
  await handOffWithin(d.queue, d.ledger, job, d.enqueueTimeoutMs, request.log);
}
