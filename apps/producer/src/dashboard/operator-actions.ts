import type { Ledger } from '@runledger/ledger';
import type { ActionResult, DeliveryData } from '@runledger/queue';
import type { Queue } from 'bullmq';
import type { FastifyBaseLogger } from 'fastify';
import { actionsFor } from '../delivery';
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
 * Performs a confirmed dashboard action through the operator actions the /v1 routes use, with
 * their queue follow-up (followUp in @runledger/queue). Throws ApiError 400 without the confirmation or with a bad field, and the ledger's
 * errors (InvalidTransitionError when the job's state forbids the action, NotFoundError).
 */
export async function performAction(deps: ActionDeps, action: DashboardAction, jobId: string, form: ActionForm, log: FastifyBaseLogger): Promise<ActionResult> {
  if (form.confirm !== 'yes') throw new ApiError(400, 'confirmation_required', `Tick the confirmation box to ${action} job ${jobId}.`);
  const act = actionsFor(deps, log);
  switch (action) {
    case 'cancel':
      return act.cancel(jobId, undefined, noteOf(form));
    case 'resume':
      return act.resume(jobId, resumeValue(form));
    case 'replay':
      return act.replay(jobId, undefined, noteOf(form));
    case 'resolve': {
      const outcome = form.outcome;
      if (outcome !== 'completed' && outcome !== 'failed') throw new ApiError(400, 'invalid_request', 'Choose the outcome: completed or failed.');
      return act.resolve(jobId, outcome, noteOf(form));
    }
    case 'upgrade': {
      const to = form.to?.trim();
      if (!to) throw new ApiError(400, 'invalid_request', 'Give the version to move the job to.');
      const job = await upgradeJob(deps.ledger, jobId, { to: to.slice(0, 200), replay: form.replay === 'yes', note: noteOf(form) }, undefined, 'tick “Replay”');
      return act.upgraded(job);
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
