import { conversationOf, type Effect, interruptQuestions, type Job, type JobEvent, noLiveWorkerServes, type WebhookDelivery } from '@runledger/ledger';
import type { z } from 'zod';
import type { Admission, EffectView, JobDetail, JobView } from './schemas';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** A job as the API shows it: the ledger row without internals (tenant, request hash, seq). */
export function jobView(job: Job): z.infer<typeof JobView> {
  return {
    jobId: job.jobId,
    graph: job.graph,
    threadId: job.threadId,
    status: job.status,
    attempt: job.attempt,
    maxAttempts: job.maxAttempts,
    fencingToken: job.fencingToken,
    leaseOwner: job.leaseOwner,
    leaseExpiresAt: iso(job.leaseExpiresAt),
    idempotencyKey: job.idempotencyKey,
    metadata: job.metadata,
    input: job.input,
    result: job.result,
    error: job.error,
    interrupt: job.interrupt,
    recoveryReason: job.recoveryReason,
    runAfter: iso(job.runAfter),
    priority: job.priority,
    blockedBy: job.blockedBy,
    graphVersion: job.graphVersion,
    waitingFor: job.versionServed === false ? noLiveWorkerServes(job.graph, job.graphVersion) : null,
    deliveries: job.deliveries,
    acceptedAt: job.acceptedAt.toISOString(),
    enqueuedAt: iso(job.enqueuedAt),
    startedAt: iso(job.startedAt),
    firstCheckpointAt: iso(job.firstCheckpointAt),
    completedAt: iso(job.completedAt),
    updatedAt: job.updatedAt.toISOString(),
  };
}

export function effectView(e: Effect): z.infer<typeof EffectView> {
  return {
    key: e.effectKey,
    name: e.name,
    status: e.status,
    attempts: e.attempts,
    idempotencyKey: e.idempotencyKey,
    result: e.result,
    error: e.error,
    updatedAt: e.updatedAt.toISOString(),
  };
}

/** The job with its effects; in `manual_reconcile`, `inDoubt` names the pending effects a person must check. */
export function jobDetail(job: Job, effects: Effect[]): z.infer<typeof JobDetail> {
  const parked = job.status === 'manual_reconcile';
  const inDoubt = parked ? effects.filter((e) => e.status === 'pending').map((e) => ({ key: e.effectKey, name: e.name })) : [];
  const conversation = {
    input: conversationOf(job.input),
    result: conversationOf(job.result),
    questions: job.status === 'interrupted' ? interruptQuestions(job.interrupt) : [],
  };
  return { ...jobView(job), conversation, effects: effects.map(effectView), inDoubt };
}

/** An admission's answer; `warning` (only when there is one) says why the job will not run soon. */
export function admissionView(job: Job, enqueued: boolean, warning?: string): z.infer<typeof Admission> {
  const view = { jobId: job.jobId, threadId: job.threadId, status: job.status, acceptedAt: job.acceptedAt.toISOString(), enqueued };
  return warning === undefined ? view : { ...view, warning };
}

export function eventView(e: JobEvent) {
  return { at: e.at.toISOString(), type: e.type, attempt: e.attempt, fencingToken: e.fencingToken, workerId: e.workerId, detail: e.detail };
}

/** A job's webhook deliveries as GET /v1/jobs/:jobId shows them; null when the job has no webhook. */
export function webhookView(webhook: { hasWebhook: boolean; deliveries: WebhookDelivery[] } | undefined) {
  if (!webhook?.hasWebhook) return null;
  return {
    deliveries: webhook.deliveries.map((d) => ({
      deliveryId: d.deliveryId,
      runStatus: d.runStatus,
      endedAt: d.endedAt.toISOString(),
      state: d.state,
      dueAt: iso(d.dueAt),
      settledAt: iso(d.settledAt),
      attempts: d.attempts.map((a) => ({ attempt: a.attempt, at: a.at.toISOString(), statusCode: a.statusCode, error: a.error })),
    })),
  };
}
