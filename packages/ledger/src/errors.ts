export type LedgerErrorCode =
  | 'LEASE_LOST'
  | 'IDEMPOTENCY_CONFLICT'
  | 'INVALID_TRANSITION'
  | 'NOT_FOUND'
  | 'THREAD_BUSY'
  | 'DATABASE_UNAVAILABLE'
  | 'MIGRATION_FAILED'
  /** The schema lacks migrations (never migrated, or an older version): run `runledger migrate`. */
  | 'SCHEMA_NOT_MIGRATED'
  /** A connection pooler keeps the ledger's session settings from it (no search_path to the schema, or `options` refused): the message names the fix. */
  | 'POOLER_REFUSED'
  /** A request the ledger refuses as it is (a reserved thread id, a malformed tenant); nothing was written. */
  | 'INVALID_REQUEST'
  /** A per-tenant cap is reached (crons per tenant); nothing was written. */
  | 'LIMIT_REACHED';

/** Base of every error the ledger throws; `code` is stable and safe to branch on. */
export class LedgerError extends Error {
  constructor(
    readonly code: LedgerErrorCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Thrown when a write carries a fencing token that is no longer current. Stop the run; do not retry. */
export class LeaseLostError extends LedgerError {
  constructor(
    readonly jobId: string,
    readonly fencingToken: number,
    what: string,
  ) {
    super(
      'LEASE_LOST',
      `Lease on job ${jobId} lost: ${what} with fencing token ${fencingToken} was refused: the lease ended (its time ran out by the database clock, a newer claim took the job, or an operator moved it). Stop this run; the job is recovered or owned elsewhere now.`,
    );
  }
}

/**
 * The fence check of every lease-holder write, in one place: `held` is what the fenced statement
 * gave back (its row, or whether as many rows came back as were sent). Nothing back means the
 * token no longer holds the job and the statement wrote nothing: LeaseLostError naming `what`.
 */
export function fenced<T>(held: T | false | null | undefined, jobId: string, token: number, what: string): T {
  if (held === false || held === null || held === undefined) throw new LeaseLostError(jobId, token, what);
  return held;
}

/** The same idempotency key arrived with a different request body. */
export class IdempotencyConflictError extends LedgerError {
  constructor(
    readonly idempotencyKey: string,
    readonly existingJobId: string,
  ) {
    super(
      'IDEMPOTENCY_CONFLICT',
      `Idempotency key "${idempotencyKey}" was already used for job ${existingJobId} with a different request. Use a new key for a new request.`,
    );
  }
}

/** The job's current state forbids the requested action (resume a running job, replay a completed one). */
export class InvalidTransitionError extends LedgerError {
  constructor(
    readonly jobId: string,
    readonly status: string,
    action: string,
  ) {
    super('INVALID_TRANSITION', `Cannot ${action} job ${jobId}: it is ${status}.`);
  }
}

/** No such job (for this tenant). */
export class NotFoundError extends LedgerError {
  constructor(readonly jobId: string) {
    super('NOT_FOUND', `Job ${jobId} not found.`);
  }
}

/** Admission with `multitask: "reject"` while the thread has an unfinished job. */
export class ThreadBusyError extends LedgerError {
  constructor(
    readonly threadId: string,
    readonly activeJobId: string,
  ) {
    super('THREAD_BUSY', `Thread ${threadId} already has unfinished job ${activeJobId}; retry later or submit with multitask "enqueue".`);
  }
}

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'ETIMEDOUT',
  'EPIPE',
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08006',
]);

/**
 * PgBouncer's own refusals (SQLSTATE 08P01) while the server behind it is down, restarting or
 * out of reach: the pooler answers, PostgreSQL does not (docs/decisions/0016-pgbouncer-transaction-mode.md).
 */
const POOLER_UNREACHABLE =
  /server login has been failing|server conn crashed|pgbouncer cannot connect|query_wait_timeout|client_login_timeout|server_connect_timeout|no more connections allowed/i;

/** True when the error means "PostgreSQL could not be reached", as opposed to a bad statement. */
export function isConnectionError(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | null;
  if (!e) return false;
  if (e.code && CONNECTION_CODES.has(e.code)) return true;
  if (e.code === '08P01' && POOLER_UNREACHABLE.test(e.message ?? '')) return true;
  return /Connection terminated|connect ECONNREFUSED|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(e.message ?? '');
}

/** SQLSTATE 53100 disk_full: PostgreSQL could not extend a file (the data volume is full). */
export const DISK_FULL = '53100';

/**
 * True when PostgreSQL refused a write because its disk is full (53100). The statement, and its
 * transaction, wrote nothing; every write fails the same way until space is freed.
 */
export function isDiskFullError(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === DISK_FULL;
}

/**
 * True when PostgreSQL refused for lack of resources (SQLSTATE class 53: too many connections,
 * out of memory, disk full): the server is up but full, and the same request may pass later.
 */
export function isCapacityError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('53');
}
