export { isAdminSessionRevoked, revokeAdminSession } from './admin-sessions';
export { admitInTransaction } from './admit-in-transaction';
export { chaosAudit, type OrphanCount } from './chaos-audit';
export { isSealedType, SealingSerializer } from './checkpoint-serde';
export {
  AesGcmPayloadCodec,
  type EncryptionKey,
  isSealedEnvelope,
  type PayloadCodec,
  parseEncryptionKeys,
  type SealedEnvelope,
  sealContext,
} from './crypto';
export { isFullySealed, readStoredPayloads, type StoredPayloads } from './crypto-audit';
export { DashboardReads, type EventBucket, type RecoveryBucket, type TimeWindow } from './dashboard-reads';
export { checkSchemaName, createPool, type PoolOptions, type Queryable } from './db';
export { countThreadCheckpoints, serverVersion } from './diagnostics';
export { type EmbeddedDatabase, type EmbeddedOptions, freePort, isPortOpen, startEmbeddedPostgres } from './embedded';
export { embeddedDataDir } from './embedded-root';
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
export { type Fence, FencedPostgresSaver, type FencedSaverOptions, OneStatementPostgresSaver } from './fenced-saver';
export { canonicalJson, requestHash } from './fingerprint';
export { type LangGraphThread, LangGraphThreads, type ThreadSearch } from './langgraph-threads';
export { Ledger, type LedgerOptions } from './ledger';
export type { Delivered } from './ledger-admission';
export { listMigrations, type MigrateOptions, migrate, schemaVersion } from './migrate';
export { type RateTake, takeRateToken } from './rate-buckets';
export { connectionStringPassword, createRedactor, REDACTED, type Redactor, redactConnectionStrings, SENSITIVE_FIELDS } from './redaction';
export { pruneFinishedThreads, type RetentionOptions, type RetentionReport } from './retention';
export { RunStreamLog, type StreamEvent } from './run-stream-log';
export { ALL_STATUSES, canTransition, isTerminal, JobStatus, LEASED_STATUSES, TERMINAL_STATUSES, TRANSITIONS } from './states';
export { storageStats, type TableStorage } from './storage-stats';
export { checkThreadKey, DEFAULT_TENANT, langGraphThreadId, RESERVED_THREAD_PREFIX } from './threads';
export { readTraceContext, recordTraceContext } from './trace-context';
export type * from './types';
export { graphVersionKey, listWorkers, registerWorker, retireWorker, type WorkerAnnouncement, type WorkerInfo } from './workers';
