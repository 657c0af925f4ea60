import type { Job, Ledger } from '@runledger/ledger';
import { ApiError } from './http-errors';

/** What the caller asks for: the version to move to, a replay when it cannot resume the checkpoints, a note for the timeline. */
export interface JobUpgrade {
  to: string;
  replay?: boolean;
  note?: string;
}

/** Why an upgrade left a job where it was; `replayHint` says how the caller's interface asks for a replay. */
function refusal(reason: string, replayHint: string): string {
  if (reason === 'incompatible')
    return `its checkpoints were written by a version the new one does not declare it can resume; ${replayHint} to run it again from its stored input`;
  if (reason === 'effects_in_doubt') return 'an effect of it is in doubt (pending), so it cannot be replayed; resolve that first';
  if (reason === 'thread_shared') return 'other jobs of its thread wrote checkpoints, which a replay would discard';
  return reason;
}

/**
 * Moves one waiting or parked job to another version of its graph (Ledger.upgrade, recorded as
 * `upgraded` in its timeline), for the /v1 upgrade action and the dashboard's; returns the job as
 * it is now (the caller delivers it unless it is still parked). Throws ApiError 409 invalid_state
 * when the job has no version, is on `to` already or is in a state that does not move, 409
 * upgrade_refused with the reason when it stays, and the ledger's errors (INVALID_REQUEST when
 * no worker announced `to`, NotFoundError).
 */
export async function upgradeJob(ledger: Ledger, jobId: string, req: JobUpgrade, tenant: string | undefined, replayHint: string): Promise<Job> {
  const job = await ledger.get(jobId, tenant);
  if (job.graphVersion === null || job.graphVersion === req.to)
    throw new ApiError(409, 'invalid_state', `Job ${jobId} runs ${job.graph}@${job.graphVersion ?? '*'}; nothing to upgrade.`);
  const up = await ledger.upgrade({ graph: job.graph, from: job.graphVersion, to: req.to, replay: req.replay, jobId, tenant, note: req.note });
  const moved = up.jobs[0];
  if (!moved)
    throw new ApiError(409, 'invalid_state', `Job ${jobId} is ${job.status}: only accepted, recovery_required or interrupted jobs move to another version.`);
  if (!moved.moved) {
    throw new ApiError(409, 'upgrade_refused', `Job ${jobId} stays on ${job.graph}@${job.graphVersion}: ${refusal(moved.refused ?? '', replayHint)}.`);
  }
  return ledger.get(jobId, tenant);
}
