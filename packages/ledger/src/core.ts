// The ledger without the LangGraph checkpointer: everything but FencedPostgresSaver and the
// checkpoint serializer, which load LangChain (about a second on a small machine). The CLI imports
// this entry so a command starts quickly; `index.ts` is this plus the checkpointer.
export { isAdminSessionRevoked, revokeAdminSession } from './admin-sessions';
export { admitInTransaction } from './admit-in-transaction';
export {
  ASSISTANT_SORT_COLUMNS,
  type AssistantFields,
  type AssistantFilter,
  type AssistantSearch,
  type AssistantVersion,
  type BuiltInAssistant,
  type StoredAssistant,
  StoredAssistants,
} from './assistants';
export { chaosAudit, type OrphanCount, type WrongVersionCount } from './chaos-audit';
export { conversationOf, interruptQuestions, type MessageView, messageView, otherFields, resumePrefill, type ToolCallView } from './conversation';
export {
  type Cron,
  type CronFiring,
  type CronOutcome,
  type CronPatch,
  type CronSearch,
  Crons,
  type CronsOptions,
  cronFiringKey,
  decideFirings,
  MISSED_POLICIES,
  type MissedPolicy,
  type NewCron,
  nextCronTime,
  shortestCronInterval,
} from './crons';
export {
  AesGcmPayloadCodec,
  type EncryptionKey,
  isSealedEnvelope,
  type PayloadCodec,
  parseEncryptionKeys,
  type SealedEnvelope,
  sealContext,
} from './crypto';
export { DashboardReads, type EventBucket, type RecoveryBucket, type TimeWindow } from './dashboard-reads';
export { checkSchemaName, createPool, PG_POOLER_HINT, PG_POOLERS, type PgPooler, type PoolOptions, type Queryable, sessionUrl } from './db';
export { countThreadCheckpoints, serverVersion } from './diagnostics';
export { type EmbeddedDatabase, type EmbeddedOptions, freePort, isPortOpen, startEmbeddedPostgres } from './embedded';
export { embeddedDataDir } from './embedded-root';
export {
  IdempotencyConflictError,
  InvalidTransitionError,
  isCapacityError,
  isConnectionError,
  isDiskFullError,
  LeaseLostError,
  LedgerError,
  type LedgerErrorCode,
  NotFoundError,
  ThreadBusyError,
} from './errors';
export { BOOKING_KINDS, type BookingKind, type BookRequest, type ExampleBooking, ExampleBookings } from './example-bookings';
export { canonicalJson, requestHash } from './fingerprint';
export { type LangGraphThread, LangGraphThreads, type ThreadSearch } from './langgraph-threads';
export { type GraphLimit, type GraphLimitSpec, Ledger, type LedgerOptions } from './ledger';
export type { Delivered } from './ledger-admission';
export { listMigrations, type MigrateOptions, migrate, requireMigrated, schemaVersion } from './migrate';
export { type RateTake, takeRateToken } from './rate-buckets';
export { connectionStringPassword, createRedactor, REDACTED, type Redactor, redactConnectionStrings, SENSITIVE_FIELDS } from './redaction';
export { KeyRotation, type ResealPosition, type ResealReport, type ResealTick, type SealedCounts } from './reseal';
export { type CheckpointRetention, type JobRetention, pruneFinishedThreads, type RetentionOptions, type RetentionReport } from './retention';
export { RunStreamLog, type StreamEvent } from './run-stream-log';
export { ALL_STATUSES, canTransition, isTerminal, JobStatus, LEASED_STATUSES, TERMINAL_STATUSES, TRANSITIONS } from './states';
export { storageStats, type TableStorage } from './storage-stats';
export { checkThreadKey, DEFAULT_TENANT, langGraphThreadId, RESERVED_THREAD_PREFIX } from './threads';
export { readTraceContext } from './trace-context';
export { type TruncateParts, truncateTenant } from './truncate';
export type * from './types';
export {
  type ClaimedWebhook,
  type WebhookAnswer,
  type WebhookAttempt,
  type WebhookDelivery,
  type WebhookDeliveryState,
  WebhookOutbox,
} from './webhook-outbox';
export {
  graphVersionKey,
  listLiveServes,
  listWorkers,
  noLiveWorkerServes,
  registerWorker,
  retireWorker,
  unservedLine,
  type WorkerAnnouncement,
  type WorkerInfo,
} from './workers';
