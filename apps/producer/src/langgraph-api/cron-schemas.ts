import { z } from 'zod';
import { Breakpoints, StreamMode } from './schemas';

// Request shapes of /runs/crons as the official SDK sends them (crons.create, createForThread,
// update, search, count). Loose like the run shapes: fields the SDK sends that change nothing a
// firing does (durability, checkpoint_during, stream_resumable) are accepted; those Runledger
// cannot honour answer 422 naming them (see cron-routes.ts).

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const metadata = z.record(z.string(), z.unknown());
const streamMode = z.union([StreamMode, z.array(StreamMode).max(StreamMode.options.length)]);
const endTime = z.iso.datetime({ offset: true, message: 'end_time must be an ISO 8601 date-time' });

export const CronIdParams = z.object({ cron_id: z.string().regex(UUID, 'cron_id must be a UUID') });

/** What a firing runs, shared by create and update. */
const runFields = {
  input: z.unknown().optional(),
  metadata: metadata.optional(),
  config: z.record(z.string(), z.unknown()).nullable().optional(),
  context: z.unknown().optional(),
  interrupt_before: Breakpoints.optional(),
  interrupt_after: Breakpoints.optional(),
  stream_mode: streamMode.optional(),
  stream_subgraphs: z.boolean().optional(),
  webhook: z.string().max(2048).nullable().optional(),
  on_run_completed: z.enum(['delete', 'keep']).optional(),
  enabled: z.boolean().optional(),
  timezone: z.string().min(1).max(100).optional(),
};

export const CronCreate = z.looseObject({
  assistant_id: z.string().min(1, 'assistant_id must not be empty').max(200),
  schedule: z.string().min(1).max(200),
  end_time: endTime.nullable().optional(),
  multitask_strategy: z.enum(['reject', 'enqueue', 'interrupt', 'rollback']).optional(),
  ...runFields,
});
export type CronCreate = z.infer<typeof CronCreate>;

export const CronUpdate = z.looseObject({
  schedule: z.string().min(1).max(200).optional(),
  /** null clears it. */
  end_time: endTime.nullable().optional(),
  ...runFields,
});
export type CronUpdate = z.infer<typeof CronUpdate>;

export const CRON_SORT_KEYS = ['cron_id', 'assistant_id', 'thread_id', 'created_at', 'updated_at', 'next_run_date'] as const;
export const CRON_FIELDS = [
  'cron_id',
  'assistant_id',
  'thread_id',
  'on_run_completed',
  'end_time',
  'schedule',
  'timezone',
  'created_at',
  'updated_at',
  'payload',
  'user_id',
  'next_run_date',
  'metadata',
  'enabled',
] as const;

const filter = {
  assistant_id: z.string().min(1).max(200).optional(),
  thread_id: z.string().regex(UUID, 'thread_id must be a UUID').optional(),
  enabled: z.boolean().optional(),
  metadata: metadata.optional(),
};

export const CronSearch = z.looseObject({
  ...filter,
  limit: z.number().int().min(1).max(1000).optional(),
  offset: z.number().int().min(0).max(1_000_000).optional(),
  sort_by: z.enum(CRON_SORT_KEYS).optional(),
  sort_order: z.enum(['asc', 'desc']).optional(),
  select: z.array(z.enum(CRON_FIELDS)).max(CRON_FIELDS.length).optional(),
});
export type CronSearch = z.infer<typeof CronSearch>;

export const CronCount = z.looseObject(filter);
export type CronCount = z.infer<typeof CronCount>;
