import type { Job } from '@runledger/ledger';
import type { FastifyRequest } from 'fastify';
import { actionsFor } from '../delivery';
import { tenantScope } from '../security';
import type { LangGraphDeps } from './context';

/**
 * Cancels a run (its job) for the caller's tenant, then hands its thread on to the next run that
 * waits for it, as the /v1 cancel does (the reconciler covers a queue outage). `rollback` also
 * deletes what the run left on its thread (its checkpoints and stream log, see Ledger.rollback):
 * the run is gone for the LangGraph API. Throws the ledger's errors (a finished run:
 * InvalidTransitionError).
 */
export async function cancelRun(d: LangGraphDeps, request: FastifyRequest, runId: string, note: string, rollback = false): Promise<void> {
  const act = actionsFor(d, request.log);
  await (rollback ? act.rollback(runId, tenantScope(request), note) : act.cancel(runId, tenantScope(request), note));
}

/**
 * A run rolled back, or deleted once finished (Ledger.deleteFinished): gone as far as the LangGraph
 * API goes (its job stays in the ledger as a receipt).
 */
export const isDeleted = (job: Pick<Job, 'status' | 'recoveryReason'>) =>
  (job.status === 'cancelled' && job.recoveryReason === 'rolled_back') || job.recoveryReason === 'deleted';
