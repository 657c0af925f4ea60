import { Reconciler } from '@runledger/queue';
import type { CliContext } from '../context';

/**
 * `runledger reconcile`: one reconciler sweep now, the same one every worker runs each second:
 * expired leases become recovery_required, and jobs with no delivery waiting in the queue are
 * delivered again. Safe to run beside live workers.
 */
export async function reconcile(ctx: CliContext, graceMs: number): Promise<void> {
  const report = await new Reconciler(ctx.ledger, await ctx.queue(), { graceMs }).sweepOnce();
  ctx.print(
    `reconciler sweep: ${report.expired} expired lease(s) moved to recovery_required, ${report.redelivered} job(s) delivered again, ${report.stillQueued} still waiting in the queue, ${report.claimedMeanwhile} claimed while the sweep ran`,
  );
}
