import type { StateSnapshot } from '@langchain/langgraph';
import type { Job } from '@runledger/ledger';
import type { RunCommand } from '@runledger/runtime';

/** What a worker does with a claimed job (ARCHITECTURE.md, Recovery decision). */
export type Decision =
  | { action: 'start' }
  | { action: 'replay'; reason: string }
  | { action: 'resume'; reason: string }
  | { action: 'resume_command'; command: RunCommand; resume?: { value: unknown } }
  | { action: 'park'; interrupts: unknown[] }
  | { action: 'complete_finished' }
  | { action: 'manual'; reason: string; effects: Array<{ effectKey: string; name: string }> }
  | { action: 'fail'; error: Record<string, unknown> };

/** The interrupt values pending on a thread's current state, if any. */
export function pendingInterrupts(state: StateSnapshot | undefined): unknown[] {
  return (state?.tasks ?? []).flatMap((t) => (t.interrupts ?? []).map((i) => i.value));
}

/**
 * The recovery table's first row: a claim past the job's last attempt (its lease expired, its
 * worker died) fails it. Checked before anything else of the attempt, the graph's build included,
 * so a job ends even when its graph cannot be built or read here.
 */
export function attemptsExhausted(job: Job): Extract<Decision, { action: 'fail' }> | undefined {
  if (job.attempt <= job.maxAttempts) return undefined;
  return { action: 'fail', error: { code: 'attempts_exhausted', message: `Gave up after ${job.maxAttempts} attempt(s).`, lastError: job.error ?? null } };
}

/**
 * The recovery table as a pure function. `state` is read only when the job has a checkpoint of
 * its own (`firstCheckpointAt`): a thread may carry earlier jobs' checkpoints, and the original
 * input is never re-sent to a thread where this job already has some.
 */
export function decide(job: Job, pendingEffects: Array<{ effectKey: string; name: string }>, state: StateSnapshot | undefined): Decision {
  const exhausted = attemptsExhausted(job);
  if (exhausted) return exhausted;
  if (!job.firstCheckpointAt) {
    if (pendingEffects.length > 0) return { action: 'manual', reason: 'effects_in_doubt_without_checkpoint', effects: pendingEffects };
    return job.attempt <= 1 && !job.recoveryReason ? { action: 'start' } : { action: 'replay', reason: job.recoveryReason ?? 'no_checkpoint' };
  }
  const interrupts = pendingInterrupts(state);
  // A resume request: its value answers pending interrupts; its update and goto (LangGraph API
  // `command`) go along, and also continue a run parked at a static breakpoint (no interrupt).
  const resume = job.resumeValue as ({ value: unknown } & RunCommand) | null;
  const command: RunCommand = { update: resume?.update, goto: resume?.goto };
  if (resume && interrupts.length > 0) return { action: 'resume_command', command, resume: { value: resume.value } };
  if (resume && (command.update !== undefined || command.goto?.length)) return { action: 'resume_command', command };
  if (interrupts.length > 0) return { action: 'park', interrupts };
  // Finished only when nothing is left: after a crash between a step's task writes and its
  // checkpoint, `next` is empty (LangGraph hides tasks that already have writes) but `tasks` is not.
  if (!state || (state.next.length === 0 && state.tasks.length === 0)) return { action: 'complete_finished' };
  return { action: 'resume', reason: job.recoveryReason ?? 'checkpoint' };
}
