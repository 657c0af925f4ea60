/** Job states. Terminal states never change again; `interrupted` and `manual_reconcile` wait for a person. */
export const JobStatus = {
  accepted: 'accepted',
  starting: 'starting',
  running: 'running',
  interrupted: 'interrupted',
  recoveryRequired: 'recovery_required',
  manualReconcile: 'manual_reconcile',
  completed: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
} as const;
export type JobStatus = (typeof JobStatus)[keyof typeof JobStatus];

export const TERMINAL_STATUSES: readonly JobStatus[] = ['completed', 'failed', 'cancelled'];
export const LEASED_STATUSES: readonly JobStatus[] = ['starting', 'running'];
export const ALL_STATUSES = Object.values(JobStatus) as JobStatus[];

/**
 * The allowed transitions, as data. Every SQL guard in `sql/` agrees with this table; the
 * property test checks that no verb ever performs a transition missing from it.
 */
export const TRANSITIONS: Readonly<Record<JobStatus, readonly JobStatus[]>> = {
  accepted: ['starting', 'running', 'cancelled'],
  starting: ['running', 'starting', 'completed', 'failed', 'interrupted', 'recovery_required', 'manual_reconcile', 'cancelled'],
  running: ['running', 'starting', 'completed', 'failed', 'interrupted', 'recovery_required', 'manual_reconcile', 'cancelled'],
  interrupted: ['accepted', 'cancelled'],
  recovery_required: ['starting', 'running', 'cancelled'],
  manual_reconcile: ['accepted', 'completed', 'failed', 'cancelled'],
  completed: [],
  failed: [],
  cancelled: [],
};

export function isTerminal(status: JobStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}

export function canTransition(from: JobStatus, to: JobStatus): boolean {
  return TRANSITIONS[from].includes(to);
}
