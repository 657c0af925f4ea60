import type { Job } from '@runledger/ledger/core';
import type { CliContext } from '../context';
import { actionsOf, deliveryLine } from './deliver';

function report(ctx: CliContext, job: Job, what: string): void {
  ctx.print(`job ${ctx.paint.bold(job.jobId)} ${what}: now ${job.status}`);
}

/** `runledger cancel <id>`: stops a job that has not finished; a running attempt loses its lease; the next job of its thread is delivered. */
export async function cancel(ctx: CliContext, jobId: string, note?: string): Promise<void> {
  const { job } = await (await actionsOf(ctx)).cancel(jobId, undefined, note);
  report(ctx, job, 'cancelled');
}

/** `runledger resume <id> --value JSON`: continues an interrupted job with `value` for interrupt(). */
export async function resume(ctx: CliContext, jobId: string, value: unknown): Promise<void> {
  const { job, enqueued } = await (await actionsOf(ctx)).resume(jobId, value);
  report(ctx, job, 'resumed');
  ctx.print(`  ${deliveryLine(ctx, enqueued === true)}`);
}

/** `runledger replay <id>`: runs a manual_reconcile job again after a person checked its effects. */
export async function replay(ctx: CliContext, jobId: string, note?: string): Promise<void> {
  const { job, enqueued } = await (await actionsOf(ctx)).replay(jobId, undefined, note);
  report(ctx, job, 'replayed');
  ctx.print(`  ${deliveryLine(ctx, enqueued === true)}`);
}

/** `runledger resolve <id> --outcome completed|failed --note TEXT`: closes a manual_reconcile job by hand. */
export async function resolve(ctx: CliContext, jobId: string, outcome: 'completed' | 'failed', note: string): Promise<void> {
  const { job } = await (await actionsOf(ctx)).resolve(jobId, outcome, note);
  report(ctx, job, `resolved as ${outcome}`);
}
