import type { Job, JobStatus } from '@runledger/ledger';

/** A run's status in the LangGraph Server API. */
export type RunStatus = 'pending' | 'running' | 'success' | 'error' | 'timeout' | 'interrupted';
/** A thread's status in the LangGraph Server API. */
export type ThreadStatus = 'idle' | 'busy' | 'interrupted' | 'error';

/**
 * Job lifecycle → run status. `recovery_required` is `pending` (another attempt will run it), never
 * an end; `manual_reconcile` is `error` (a person must act: the client sees it, it does not hang);
 * a parked `interrupted` job is `interrupted` until `command: { resume }` makes it `pending` again;
 * a cancelled run is `interrupted`, as the reference server reports a cancelled run.
 */
const RUN_STATUS: Record<JobStatus, RunStatus> = {
  accepted: 'pending',
  recovery_required: 'pending',
  starting: 'running',
  running: 'running',
  interrupted: 'interrupted',
  completed: 'success',
  failed: 'error',
  manual_reconcile: 'error',
  cancelled: 'interrupted',
};

/** A job's run status; a failure of the attempt's time limit is `timeout`. */
export function runStatus(job: Pick<Job, 'status' | 'error'>): RunStatus {
  if (job.status === 'failed' && (job.error as { code?: string } | null)?.code === 'timeout') return 'timeout';
  return RUN_STATUS[job.status];
}

/** The thread status of a thread whose newest job is in `status` (null: no job yet). */
export function threadStatus(status: JobStatus | null): ThreadStatus {
  if (status === null) return 'idle';
  const run = RUN_STATUS[status];
  if (run === 'pending' || run === 'running') return 'busy';
  if (status === 'interrupted') return 'interrupted';
  if (run === 'error') return 'error';
  return 'idle';
}

/** The newest-job statuses (and 'none' for no job) that give a thread status; for searching. */
export function jobStatusesOf(thread: ThreadStatus): Array<JobStatus | 'none'> {
  const all = [...(Object.keys(RUN_STATUS) as JobStatus[]), 'none'] as const;
  return all.filter((s) => threadStatus(s === 'none' ? null : s) === thread);
}

/** Whether a client waiting on the run is done waiting: the run will not move without a person or a new request. */
export function isSettled(status: JobStatus): boolean {
  const run = RUN_STATUS[status];
  return run !== 'pending' && run !== 'running';
}

/** The `__error__` of a run that ended in error (failed or waiting for manual reconciliation), else undefined. */
export function runError(job: Pick<Job, 'status' | 'error' | 'recoveryReason'>): { error: string; message: string } | undefined {
  if (job.status === 'manual_reconcile') {
    return {
      error: 'ManualReconcileRequired',
      message: `The run stopped for a person (${job.recoveryReason ?? 'manual_reconcile'}): an effect's outcome is unknown. An operator replays or resolves it.`,
    };
  }
  if (job.status !== 'failed') return undefined;
  const e = (job.error ?? {}) as { name?: string; message?: string };
  return { error: e.name ?? 'Error', message: e.message ?? 'The run failed.' };
}
