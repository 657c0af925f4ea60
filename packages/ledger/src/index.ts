export { admitInTransaction } from './admit-in-transaction';
export { checkSchemaName, createPool, type PoolOptions, type Queryable } from './db';
export { type EmbeddedDatabase, type EmbeddedOptions, freePort, isPortOpen, startEmbeddedPostgres } from './embedded';
export {
  IdempotencyConflictError,
  InvalidTransitionError,
  isConnectionError,
  LeaseLostError,
  LedgerError,
  type LedgerErrorCode,
  NotFoundError,
  ThreadBusyError,
} from './errors';
export { BOOKING_KINDS, type BookingKind, type BookRequest, type ExampleBooking, ExampleBookings } from './example-bookings';
export { type Fence, FencedPostgresSaver } from './fenced-saver';
export { canonicalJson, requestHash } from './fingerprint';
export { Ledger, type LedgerOptions } from './ledger';
export { listMigrations, type MigrateOptions, migrate, schemaVersion } from './migrate';
export { ALL_STATUSES, canTransition, isTerminal, JobStatus, LEASED_STATUSES, TERMINAL_STATUSES, TRANSITIONS } from './states';
export type * from './types';
