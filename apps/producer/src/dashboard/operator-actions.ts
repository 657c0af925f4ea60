import type { Job, Ledger } from '@runledger/ledger';
import type { DeliveryData } from '@runledger/queue';
import type { Queue } from 'bullmq';
import type { FastifyBaseLogger } from 'fastify';
import { deliverWithin, handOffWithin } from '../delivery';
import { ApiError } from '../http-errors';
import { upgradeJob } from '../job-upgrade';

export const DASHBOARD_ACTIONS = ['cancel', 'resume', 'replay', 'resolve', 'upgrade'] as const;
export type DashboardAction = (typeof DASHBOARD_ACTIONS)[number];

export interface ActionDeps {
  ledger: Ledger;
  queue: Queue<DeliveryData>;
  enqueueTimeoutMs: number;
}

/** A submitted action form (application/x-www-form-urlencoded, one value per field). */
export type ActionForm = Record<string, string | undefined>;

function noteOf(form: ActionForm): string | undefined {
  const note = form.note?.trim();
  return note ? note.slice(0, 500) : undefined;
}

function resumeValue(form: ActionForm): unknown {
  try {
    return JSON.parse(form.value ?? '');
  } catch {
    throw new ApiError(400, 'invalid_request', 'The resume value is not valid JSON (a string needs quotes: "yes").');
  }
}

/**
 * Performs a confirmed dashboard action with the ledger verbs the /v1 action routes use; resume,
 * replay and an upgrade (unless the job stays parked) are delivered at once like there, and cancel and resolve hand the thread on
 * (deliverWithin, handOffWithin; the reconciler covers a queue outage). Throws ApiError 400 without the confirmation or with a bad field, and the ledger's
 * errors (InvalidTransitionError when the job's state forbids the action, NotFoundError).
 */
export async function performAction(
  deps: ActionDeps,
  action: DashboardAction,
  jobId: string,
  form: ActionForm,
  log: FastifyBaseLogger,
): Promise<{ job: Job; enqueued?: boolean }> {
  if (form.confirm !== 'yes') throw new ApiError(400, 'confirmation_required', `Tick the confirmation box to ${action} job ${jobId}.`);
  const { ledger } = deps;
  const deliver = async (job: Job) => ({ job, enqueued: await deliverWithin(deps.queue, ledger, job, deps.enqueueTimeoutMs, log) });
  // cancel and resolve end the job: hand its thread to the next job waiting for it.
  const handOff = async (job: Job) => {
    await handOffWithin(deps.queue, ledger, job, deps.enqueueTimeoutMs, log);
    return { job };
  };
  switch (action) {
    case 'cancel':
      return handOff(await ledger.cancel(jobId, undefined, noteOf(form)));
    case 'resume':
      return deliver(await ledger.resume(jobId, resumeValue(form)));
    case 'replay':
      return deliver(await ledger.replay(jobId, undefined, noteOf(form)));
    case 'resolve': {
      const outcome = form.outcome;
      if (outcome !== 'completed' && outcome !== 'failed') throw new ApiError(400, 'invalid_request', 'Choose the outcome: completed or failed.');
      return handOff(await ledger.resolve(jobId, outcome, noteOf(form)));
    }
    case 'upgrade': {
      const to = form.to?.trim();
      if (!to) throw new ApiError(400, 'invalid_request', 'Give the version to move the job to.');
      const job = await upgradeJob(ledger, jobId, { to: to.slice(0, 200), replay: form.replay === 'yes', note: noteOf(form) }, undefined, 'tick “Replay”');
      return job.status === 'interrupted' ? { job } : deliver(job);
    }
  }
}

/** The line the job page shows after an action. */
export function actionNotice(action: DashboardAction, enqueued: boolean | undefined): string {
  const done = { cancel: 'Cancelled.', resume: 'Resume requested.', replay: 'Replay requested.', resolve: 'Resolved.', upgrade: 'Moved to the new version.' }[
    action
  ];
  if (enqueued === undefined) return done;
  return `${done} ${enqueued ? 'Delivered to the queue.' : 'The queue did not answer; the reconciler will deliver it.'}`;
}
