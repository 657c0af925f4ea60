import { ALL_STATUSES } from '@runledger/ledger';
import { z } from 'zod';
import { MAX_DELAY_MS, PRIORITY_RANGE, RUN_AT_PAST_TOLERANCE_MS } from './schedule';

// Request and response shapes of the HTTP API. Routes validate requests with these (see
// zod-compilers.ts) and /openapi.json is generated from them, so the two cannot drift apart.

const id = (what: string) =>
  z
    .string()
    .min(1, `${what} must not be empty`)
    .max(200, `${what} is longer than 200 characters`)
    // PostgreSQL cannot store \u0000 in text: refused here instead of failing the query with a 500.
    .refine((s) => !s.includes('\u0000'), `${what} must not contain the NUL character (\\u0000)`);
const present = (what: string) => z.custom<unknown>((v) => v !== undefined, { message: `${what} is required (send null for none)` });
const json = z.unknown();
const time = z.string().describe('ISO 8601 timestamp');
const maybeTime = time.nullable();

export const JobIdParams = z.object({ jobId: id('jobId') });
export const ThreadIdParams = z.object({ threadId: id('threadId') });

export const SubmitBody = z
  .object({
    graph: id('graph').describe('Name of a graph in the registry'),
    input: present('input').describe("The graph's input; checked by the graph's validateInput"),
    threadId: id('threadId')
      .optional()
      .describe("The caller's thread (threads are per tenant; must not start with '~'); default: a new thread named after the job"),
    idempotencyKey: id('idempotencyKey').optional().describe('Same key and request → the same job (or send the Idempotency-Key header)'),
    multitask: z.enum(['enqueue', 'reject']).optional().describe('With a busy thread: wait behind its jobs (default) or answer 409 thread_busy'),
    metadata: z.record(z.string(), json).optional(),
    config: z
      .record(z.string(), json)
      .optional()
      .describe(
        "The graph's LangGraph config: { configurable, tags, metadata, recursion_limit } (recursion_limit default 25), over the graph's LANGGRAPH_CONFIG entry; every attempt gets the same. 422 invalid_config for a key Runledger cannot honour",
      ),
    context: json.optional().describe("LangGraph's Runtime.context (checked by the graph's contextSchema), over the graph's LANGGRAPH_CONFIG entry"),
    maxAttempts: z.number().int().min(1).max(100).optional().describe('Default 3'),
    timeoutMs: z.number().int().min(1).max(86_400_000).optional(),
    runAt: z.iso
      .datetime({ offset: true })
      .optional()
      .describe(
        `Do not run before this time (ISO 8601 with offset); at most ${RUN_AT_PAST_TOLERANCE_MS / 1000} s in the past (then it runs now) and 366 days ahead. The ledger holds it; not with delayMs`,
      ),
    delayMs: z.number().int().min(0).max(MAX_DELAY_MS).optional().describe('Do not run before this many ms from now; not with runAt'),
    priority: z
      .number()
      .int()
      .min(PRIORITY_RANGE.min)
      .max(PRIORITY_RANGE.max)
      .optional()
      .describe('0 (default: none, served before any prioritized job) or 1–1000, lower runs first (BullMQ’s order)'),
    webhook: z
      .string()
      .max(2048, 'webhook is longer than 2048 characters')
      .optional()
      .describe(
        'URL POSTed the run (signed, see SECURITY.md) each time it ends: completed, failed, cancelled, interrupted, manual_reconcile. Its host must be allowed (WEBHOOK_ALLOWED_HOSTS); 422 invalid_webhook otherwise',
      ),
  })
  .strict();
export type SubmitBody = z.infer<typeof SubmitBody>;

export const SubmitHeaders = z.looseObject({ 'idempotency-key': id('Idempotency-Key header').optional() });

export const ListQuery = z
  .object({
    status: z.enum(ALL_STATUSES as [string, ...string[]]).optional(),
    graph: id('graph').optional(),
    threadId: id('threadId').optional(),
    limit: z.coerce.number().int().min(1).max(500).optional().describe('Default 50'),
    cursor: z
      .string()
      .regex(/^\d{1,18}$/, 'cursor must be a nextCursor value from an earlier page')
      .optional(),
  })
  .strict();

export const CancelBody = z
  .object({ note: z.string().max(2_000).optional() })
  .strict()
  .nullish();
export const ReplayBody = CancelBody;
export const ResumeBody = z.object({ resume: present('resume').describe('The value interrupt() returns when the graph continues') }).strict();
export const UpgradeBody = z
  .object({
    to: z.string().min(1).max(200).describe('The version to move the job to; a worker must have announced it'),
    replay: z
      .boolean()
      .optional()
      .describe(
        'When the new version cannot resume the old checkpoints: start again from the stored input (refused while an effect is in doubt). Default false',
      ),
    note: z.string().max(2_000).optional(),
  })
  .strict();
export const ResolveBody = z.object({ outcome: z.enum(['completed', 'failed']), note: z.string().min(1).max(2_000) }).strict();

export const ErrorBody = z.object({ error: z.object({ code: z.string(), message: z.string() }) });

export const Admission = z.object({
  jobId: z.string(),
  threadId: z.string(),
  status: z.string(),
  acceptedAt: time,
  enqueued: z
    .boolean()
    .describe(
      'False when the queue was unreachable (the reconciler delivers the job later). On a repeated submission (200): whether the job got past the queue, its delivery is in it now, or it waits for its thread (delivered when its turn comes)',
    ),
  warning: z
    .string()
    .optional()
    .describe(
      'Present only when the job will not run soon: live workers announce what they serve and none serves its graph and version ("no live worker serves vacation@1.0.0: …"). The job is admitted all the same and waits in the ledger until such a worker starts',
    ),
});

export const EffectView = z.object({
  key: z.string(),
  name: z.string(),
  status: z.enum(['pending', 'committed', 'failed']),
  attempts: z.number(),
  idempotencyKey: z.string(),
  result: json,
  error: json,
  updatedAt: time,
});

export const JobView = z.object({
  jobId: z.string(),
  graph: z.string(),
  threadId: z.string(),
  status: z.string(),
  attempt: z.number(),
  maxAttempts: z.number(),
  fencingToken: z.number(),
  leaseOwner: z.string().nullable(),
  leaseExpiresAt: maybeTime,
  idempotencyKey: z.string().nullable(),
  metadata: z.record(z.string(), json),
  input: json,
  result: json,
  error: json,
  interrupt: json,
  recoveryReason: z.string().nullable(),
  runAfter: maybeTime.describe('Not claimed before this time: a delayed admission (runAt, delayMs) or a retry’s back-off'),
  priority: z
    .number()
    .describe(
      '0 = none (served first), else lower runs first; becomes 0 once the job has waited PRIORITY_AGING_MS (its priority_aged event keeps the one it had)',
    ),
  blockedBy: z
    .string()
    .nullable()
    .describe(
      'While accepted or recovery_required: the job holding this job’s thread (an earlier unfinished job of the thread, or the one running on it), which this job waits for; its turn comes when that job ends. Null otherwise, and in action answers',
    ),
  graphVersion: z
    .string()
    .nullable()
    .optional()
    .describe(
      'The version of its graph that runs the job: recorded at admission, moved only by an upgrade. Null for jobs admitted without one (any worker of the graph)',
    ),
  waitingFor: z
    .string()
    .nullable()
    .optional()
    .describe(
      'While the job waits (accepted, recovery_required, interrupted) and no live worker serves its graph and version: why, e.g. "no live worker serves deploy@v1". Null otherwise',
    ),
  deliveries: z.number().describe("Deliveries issued so far: the admission issues the first; the timeline's `enqueued` events say which the queue took"),
  acceptedAt: time,
  enqueuedAt: maybeTime.describe('When the latest delivery was issued'),
  startedAt: maybeTime,
  firstCheckpointAt: maybeTime,
  completedAt: maybeTime,
  updatedAt: time,
});

const MessageView = z.object({
  role: z.string().describe('user, assistant, system or tool'),
  text: z.string(),
  name: z.string().nullable(),
  toolCalls: z.array(z.object({ id: z.string().nullable(), name: z.string(), args: json })),
  toolCallId: z.string().nullable().describe('For a tool result: the tool call it answers'),
});

export const Conversation = z
  .object({
    input: z.array(MessageView).nullable(),
    result: z.array(MessageView).nullable(),
    questions: z.array(z.string()).describe('While interrupted: what the graph asks (each interrupt value’s text or `question`)'),
  })
  .describe(
    'The LangChain messages of `input` and `result` as a conversation (role, text, tool calls with arguments, tool results), null where the value holds no messages; `input`, `result` and `interrupt` keep the raw values',
  );

const WebhookDeliveryView = z.object({
  deliveryId: z.string().describe('The webhook-id header: the same on every attempt of this run end'),
  runStatus: z.string().describe('The job status this delivery announces'),
  endedAt: time,
  state: z.enum(['pending', 'delivered', 'gave_up']),
  dueAt: maybeTime.describe('When the next attempt is due (pending only)'),
  settledAt: maybeTime,
  attempts: z.array(z.object({ attempt: z.number(), at: time, statusCode: z.number().nullable(), error: z.string().nullable() })),
});

export const JobDetail = JobView.extend({
  conversation: Conversation,
  effects: z.array(EffectView),
  webhook: z
    .object({ deliveries: z.array(WebhookDeliveryView) })
    .nullable()
    .optional()
    .describe('GET /v1/jobs/:jobId: null when the job has no webhook; else one delivery per run end with each attempt and its answer'),
  inDoubt: z
    .array(z.object({ key: z.string(), name: z.string() }))
    .describe('In manual_reconcile: the effects whose outcome is unknown (pending), what a person checks; empty otherwise'),
});

export const ActionResult = JobDetail.extend({
  enqueued: z.boolean().optional().describe('After resume and replay: whether the new delivery reached the queue'),
});

export const JobList = z.object({ jobs: z.array(JobView), nextCursor: z.string().nullable() });

export const EventList = z.object({
  events: z.array(
    z.object({
      at: time,
      type: z.string(),
      attempt: z.number(),
      fencingToken: z.number(),
      workerId: z.string().nullable(),
      detail: z.record(z.string(), json),
    }),
  ),
});

export const ThreadState = z.object({
  threadId: z.string(),
  jobId: z.string().describe('The latest job of the thread, whose graph read the state'),
  graph: z.string(),
  values: json,
  next: z.array(z.string()),
  tasks: z.array(z.object({ id: z.string(), name: z.string(), interrupts: z.array(json) })),
  checkpointId: z.string().nullable(),
  parentCheckpointId: z.string().nullable(),
  createdAt: z.string().nullable(),
  metadata: json,
});

export const Readiness = z.object({
  status: z.string(),
  checks: z.record(z.string(), z.string()),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
});

/** Most jobs one POST /v1/jobs/batch may carry; the ledger writes up to this many rows in one statement. */
export const MAX_BATCH_JOBS = 500;

/** The JSON Schema of one submission, shown in /openapi.json for each batch item (items are checked one by one). */
const { $schema: _drop, ...submitJsonSchema } = z.toJSONSchema(SubmitBody, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;

export const BatchBody = z
  .object({
    jobs: z
      .array(z.unknown().meta(submitJsonSchema))
      .min(1, 'body.jobs must hold at least one job')
      .max(MAX_BATCH_JOBS, `a batch holds at most ${MAX_BATCH_JOBS} jobs; split it into several requests`)
      .describe(
        `1 to ${MAX_BATCH_JOBS} submissions, each shaped like the body of POST /v1/jobs. Each is checked on its own: an invalid one gets its own 400/422 answer and does not refuse the others`,
      ),
  })
  .strict();

export const BatchAnswer = z.object({
  results: z
    .array(
      z.object({
        status: z.number().int().describe('What POST /v1/jobs would answer for this job alone: 202 new, 200 repeated, 409, 400, 422'),
        body: z.union([Admission, ErrorBody]).describe('The body POST /v1/jobs would answer for this job alone'),
      }),
    )
    .describe('One answer per submitted job, in the order sent'),
});
export type BatchBody = z.infer<typeof BatchBody>;

export const CronIdParams = z.object({ cronId: id('cronId') });

const cronFields = {
  schedule: z.string().min(1).max(200).describe('Cron expression, 5 fields (minute first) or 6 (seconds first), in cron-parser’s syntax; e.g. "0 3 * * *"'),
  timezone: z.string().min(1).max(100).describe('IANA time zone the schedule is read in; default UTC'),
  input: present('input').describe('The input of every firing'),
  missed: z
    .enum(['run-once', 'skip'])
    .describe(
      'Scheduled times missed while every producer was down (older than CRON_MISFIRE_GRACE_MS): run-once admits the latest of them once; skip admits none. All are recorded',
    ),
  enabled: z.boolean(),
};

export const CronBody = z
  .object({
    graph: id('graph').describe('Name of a graph in the registry'),
    ...cronFields,
    timezone: cronFields.timezone.optional(),
    missed: cronFields.missed.optional(),
    enabled: cronFields.enabled.optional(),
    threadId: id('threadId').optional().describe('Every firing is a turn of this thread; default: a new thread per firing'),
    metadata: z.record(z.string(), json).optional(),
  })
  .strict();
export type CronBody = z.infer<typeof CronBody>;

export const CronPatchBody = z
  .object({
    schedule: cronFields.schedule.optional(),
    timezone: cronFields.timezone.optional(),
    input: json.optional(),
    missed: cronFields.missed.optional(),
    enabled: cronFields.enabled.optional().describe('Enabling a disabled cron restarts it from now; times passed while it was off are not fired'),
  })
  .strict();
export type CronPatchBody = z.infer<typeof CronPatchBody>;

export const CronView = z.object({
  cronId: z.string(),
  graph: z.string(),
  schedule: z.string(),
  timezone: z.string(),
  input: json,
  threadId: z.string().nullable(),
  metadata: z.record(z.string(), json),
  missed: z.string(),
  enabled: z.boolean(),
  nextFireAt: time.describe('The earliest scheduled time not yet handled'),
  createdAt: time,
  updatedAt: time,
});

export const CronFiringView = z.object({
  scheduledAt: time,
  outcome: z
    .enum(['admitted', 'caught_up', 'missed', 'failed'])
    .describe('admitted on time; caught_up: admitted late by run-once; missed: not run; failed: admission refused it (see reason)'),
  jobId: z.string().nullable(),
  reason: z.string().nullable().describe('Why a failed time was not admitted: the refusal, as POST /v1/jobs would answer it; null otherwise'),
  recordedAt: time,
});

export const CronDetail = CronView.extend({ firings: z.array(CronFiringView).describe('The latest 50 handled scheduled times, newest first') });
export const CronList = z.object({ crons: z.array(CronView), nextCursor: z.string().nullable() });
export const CronListQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(500).optional().describe('Default 50'),
    cursor: z
      .string()
      .regex(/^\d{1,18}_.{1,200}$/, 'cursor must be a nextCursor value from an earlier page')
      .optional(),
  })
  .strict();
