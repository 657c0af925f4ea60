import type { ClaimedWebhook } from '@runledger/ledger';
import { runView } from '../langgraph-api/run-views';
import { runError, runStatus } from '../langgraph-api/status';

/**
 * The body of a delivery: the run as LangGraph's server sends it to a webhook (its Run object with
 * the status of this end, run_started_at, run_ended_at, webhook_sent_at, the final `values` of a
 * run that succeeded, `error` of one that failed), plus `webhook_id`, the delivery's id.
 */
export function webhookPayload(claimed: ClaimedWebhook, sentAt: Date): Record<string, unknown> {
  const { job, runStatus: endStatus, endedAt, deliveryId, url } = claimed;
  const run = runView(job);
  const status = runStatus({ status: endStatus, error: job.error });
  const error = runError({ status: endStatus, error: job.error, recoveryReason: job.recoveryReason });
  return {
    ...run,
    kwargs: { ...run.kwargs, webhook: url },
    status,
    run_started_at: (job.startedAt ?? job.acceptedAt).toISOString(),
    run_ended_at: endedAt.toISOString(),
    webhook_sent_at: sentAt.toISOString(),
    webhook_id: deliveryId,
    ...(endStatus === 'completed' ? { values: job.result } : {}),
    ...(error ? { error: error.message } : {}),
  };
}
