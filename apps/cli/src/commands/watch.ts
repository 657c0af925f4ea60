import { type Effect, interruptQuestions, type Job, type JobEvent } from '@runledger/ledger/core';
import type { CliContext } from '../context';
import { compact, summarizeResult } from '../format';
import { type LiveSnapshot, LiveView, SETTLED } from '../progress';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The live view's shape of a job read from the ledger. */
export function ledgerSnapshot(job: Job, events: JobEvent[], effects: Effect[]): LiveSnapshot {
  return {
    status: job.status,
    attempt: job.attempt,
    acceptedAt: job.acceptedAt,
    events,
    effects: effects.map((e) => ({ key: e.effectKey, name: e.name, status: e.status, result: e.result, error: e.error, updatedAt: e.updatedAt })),
  };
}

/**
 * `runledger watch <id>`: prints the timeline and effects as they appear until the job is
 * terminal or parked for a person. Returns the exit code: 0 completed or parked, 1 failed or cancelled.
 */
export async function watchJob(ctx: CliContext, jobId: string, intervalMs = 300): Promise<number> {
  const { ledger, paint } = ctx;
  let job = await ledger.get(jobId);
  ctx.print(`Watching job ${paint.bold(jobId)} (graph ${job.graph}, thread ${job.threadId}); Ctrl-C stops watching, not the job.`);
  const view = new LiveView({
    write: (t) => ctx.out.write(t),
    paint,
    bar: ctx.out.isTTY === true,
    expectedEffects: job.graph === 'vacation' ? 3 : undefined,
  });
  for (;;) {
    const [events, effects] = await Promise.all([ledger.events(jobId), ledger.effects(jobId)]);
    view.update(ledgerSnapshot(job, events, effects));
    if (SETTLED.has(job.status)) break;
    await sleep(intervalMs);
    job = await ledger.get(jobId);
  }
  view.end();
  const tail =
    job.status === 'completed'
      ? `result ${summarizeResult(job.result)}`
      : job.status === 'interrupted'
        ? `the graph asks ${interruptQuestions(job.interrupt)
            .map((q) => `"${q}"`)
            .join(' and ')}; continue it: npx runledger resume ${jobId} --value '<json>'`
        : job.status === 'manual_reconcile'
          ? `check its effects in doubt, then: npx runledger replay ${jobId}  or  npx runledger resolve ${jobId} --outcome completed|failed --note '…'`
          : compact(job.error ?? '', 160);
  const color = job.status === 'completed' ? paint.green : job.status === 'failed' || job.status === 'cancelled' ? paint.red : paint.yellow;
  ctx.print(`Job ${color(job.status)} after ${job.attempt} attempt(s): ${tail}`);
  return job.status === 'failed' || job.status === 'cancelled' ? 1 : 0;
}
