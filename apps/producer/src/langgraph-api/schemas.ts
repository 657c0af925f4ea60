import { ASSISTANT_SORT_COLUMNS } from '@runledger/ledger';
import { STREAM_MODES } from '@runledger/runtime';
import { z } from 'zod';
import { MAX_DELAY_MS } from '../schedule';

// Request shapes of the LangGraph Server API routes, as the official SDK sends them. Objects are
// loose: fields the SDK sends that Runledger does not act on are accepted and ignored, except
// those that would change what a run does (see UNSUPPORTED_RUN_FIELDS), which answer 422.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const uuid = (what: string) => z.string().regex(UUID, `${what} must be a UUID`);
const metadata = z.record(z.string(), z.unknown());
const limit = (max: number) => z.coerce.number().int().min(1).max(max);
const offset = z.coerce.number().int().min(0).max(1_000_000);

/** A checkpoint as the SDK names one (useStream sends the one of the branch the user views). */
const CheckpointRef = z.looseObject({
  checkpoint_id: z.string().min(1).max(200).nullish(),
  checkpoint_ns: z.string().max(200).nullish(),
  checkpoint_map: z.record(z.string(), z.unknown()).nullish(),
  thread_id: z.string().max(200).nullish(),
});

export const ThreadParams = z.object({ thread_id: uuid('thread_id') });
export const RunParams = z.object({ thread_id: uuid('thread_id'), run_id: uuid('run_id') });
export const RunIdParams = z.object({ run_id: uuid('run_id') });

export const AssistantParams = z.object({
  assistant_id: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[^\0]+$/, 'assistant_id cannot contain NUL'),
});
export const SubgraphParams = AssistantParams.extend({ namespace: z.string().min(1).max(500).optional() });

/** A RunnableConfig as LangGraph stores it with an assistant. */
const AssistantConfig = z.looseObject({
  tags: z.array(z.string().max(200)).max(100).optional(),
  recursion_limit: z.number().int().min(1).optional(),
  configurable: metadata.optional(),
});
const graphId = z.string().min(1).max(200);
const assistantFields = {
  config: AssistantConfig.optional(),
  context: metadata.optional(),
  metadata: metadata.optional(),
  name: z.string().max(500).optional(),
  description: z.string().max(10_000).optional(),
};

export const AssistantCreate = z.looseObject({
  assistant_id: uuid('assistant_id').optional(),
  graph_id: graphId,
  if_exists: z.enum(['raise', 'do_nothing']).optional(),
  ...assistantFields,
});
export type AssistantCreate = z.infer<typeof AssistantCreate>;

/** Each field replaces the current version's; metadata is merged into it. */
export const AssistantPatch = z.looseObject({ graph_id: graphId.optional(), ...assistantFields });
export type AssistantPatch = z.infer<typeof AssistantPatch>;

const assistantFilter = { graph_id: graphId.optional(), name: z.string().max(500).optional(), metadata: metadata.optional() };
export const AssistantCount = z.looseObject(assistantFilter);

export const ASSISTANT_FIELDS = [
  'assistant_id',
  'graph_id',
  'name',
  'description',
  'config',
  'context',
  'metadata',
  'version',
  'created_at',
  'updated_at',
] as const;
export const AssistantSearch = z.looseObject({
  ...assistantFilter,
  sort_by: z.enum(ASSISTANT_SORT_COLUMNS).optional(),
  sort_order: z.enum(['asc', 'desc']).optional(),
  select: z.array(z.enum(ASSISTANT_FIELDS)).max(ASSISTANT_FIELDS.length).optional(),
  limit: limit(1000).optional(),
  offset: offset.optional(),
});

export const AssistantVersions = z.looseObject({ metadata: metadata.optional(), limit: limit(1000).optional(), offset: offset.optional() });
export const AssistantLatest = z.looseObject({ version: z.number().int().min(1) });

export const ThreadCreate = z.looseObject({
  thread_id: uuid('thread_id').optional(),
  metadata: metadata.optional(),
  if_exists: z.enum(['raise', 'do_nothing']).optional(),
  /** State updates applied in order to the new thread, each superstep's updates as one step (needs metadata.graph_id). */
  supersteps: z
    .array(
      z.object({
        updates: z
          .array(z.looseObject({ values: z.unknown().optional(), command: z.unknown().optional(), as_node: z.string().min(1).max(200) }))
          .min(1)
          .max(100),
      }),
    )
    .max(100)
    .optional(),
});

const ThreadFilter = {
  metadata: metadata.optional(),
  status: z.enum(['idle', 'busy', 'interrupted', 'error']).optional(),
  // Thread values live in (possibly sealed) checkpoints, which the ledger does not query.
  values: z.undefined('searching by values is not supported by Runledger yet').optional(),
};

export const ThreadSearch = z.looseObject({
  ...ThreadFilter,
  ids: z.array(uuid('ids[]')).max(1000).optional(),
  limit: limit(1000).optional(),
  offset: offset.optional(),
  sort_by: z.enum(['thread_id', 'status', 'created_at', 'updated_at']).optional(),
  sort_order: z.enum(['asc', 'desc']).optional(),
  /** The Thread fields to answer (all when absent). */
  select: z
    .array(z.enum(['thread_id', 'created_at', 'updated_at', 'metadata', 'status', 'values', 'interrupts', 'config']))
    .max(20)
    .optional(),
});

export const ThreadCount = z.looseObject(ThreadFilter);

export const ThreadPatch = z.looseObject({ metadata: metadata });

export const HistoryBody = z.looseObject({
  limit: limit(1000).optional(),
  before: z.union([z.string().min(1), z.object({ configurable: z.looseObject({ checkpoint_id: z.string().min(1) }) })]).optional(),
  /** Only checkpoints whose metadata contains this object. */
  metadata: metadata.optional(),
  /** Only this checkpoint. */
  checkpoint: CheckpointRef.optional(),
});

export const HistoryQuery = z.looseObject({ limit: limit(1000).optional(), before: z.string().min(1).max(200).optional() });

export const StateQuery = z.looseObject({ subgraphs: z.enum(['0', '1', 'true', 'false']).optional() });
export const CheckpointParams = z.object({ thread_id: uuid('thread_id'), checkpoint_id: z.string().min(1).max(200) });
export const StateAtCheckpoint = z.looseObject({ subgraphs: z.boolean().optional(), checkpoint: CheckpointRef.nullish() });

export const StateUpdate = z.looseObject({
  values: z.unknown().optional(),
  as_node: z.string().min(1).max(200).optional(),
  checkpoint_id: z.string().min(1).max(200).optional(),
  checkpoint: z
    .looseObject({ checkpoint_id: z.string().min(1).max(200).optional(), checkpoint_ns: z.string().max(200).nullish() })
    .nullable()
    .optional(),
});
export type StateUpdate = z.infer<typeof StateUpdate>;

export const StreamMode = z.enum(STREAM_MODES);
const NodeName = z.string().min(1).max(200);
const GotoTarget = z.union([NodeName, z.looseObject({ node: NodeName, input: z.unknown() })]);
/** Command.goto: a node, a Send ({ node, input }), or a list of them. */
const Goto = z.union([GotoTarget, z.array(GotoTarget).max(100)]);
/** interrupt_before / interrupt_after: node names, or "*" for every node. */
export const Breakpoints = z.union([z.literal('*'), z.array(NodeName).max(100)]);

export const RunCreate = z.looseObject({
  assistant_id: z.string().min(1, 'assistant_id must not be empty').max(200),
  input: z.unknown().optional(),
  command: z.looseObject({ resume: z.unknown().optional(), update: z.unknown().optional(), goto: Goto.optional() }).nullable().optional(),
  interrupt_before: Breakpoints.optional(),
  interrupt_after: Breakpoints.optional(),
  stream_mode: z.union([StreamMode, z.array(StreamMode).max(STREAM_MODES.length)]).optional(),
  stream_subgraphs: z.boolean().optional(),
  metadata: metadata.optional(),
  /** The graph's config (configurable, tags, metadata, recursion_limit) and LangGraph v1 context: stored with the job (runConfigProblem says what is refused). */
  config: z.record(z.string(), z.unknown()).nullable().optional(),
  context: z.unknown().optional(),
  /** Start at this checkpoint of the thread instead of its latest: a fork (a new branch). */
  checkpoint_id: z.string().min(1).max(200).nullish(),
  checkpoint: CheckpointRef.nullish(),
  multitask_strategy: z.enum(['reject', 'enqueue', 'interrupt', 'rollback']).optional(),
  if_not_exists: z.enum(['create', 'reject']).optional(),
  on_disconnect: z.enum(['cancel', 'continue']).optional(),
  /** A thread-less run's thread after it ends: only `keep` (see createRun). */
  on_completion: z.enum(['delete', 'keep']).optional(),
  /** Told (a signed POST of the run) each time the run ends; its host must be allowed (WEBHOOK_ALLOWED_HOSTS). */
  webhook: z.string().max(2048).nullable().optional(),
  /** Run no earlier than this many seconds from now: the job's due time in the ledger (as `delayMs` on /v1). */
  after_seconds: z
    .number()
    .min(0)
    .max(MAX_DELAY_MS / 1000)
    .nullable()
    .optional(),
});
export type RunCreate = z.infer<typeof RunCreate>;

/** Fields of a run request that would change the run and that Runledger does not do yet. */
export const UNSUPPORTED_RUN_FIELDS: readonly string[] = [];

export const CancelQuery = z.looseObject({
  wait: z.enum(['0', '1', 'true', 'false']).optional(),
  action: z.enum(['interrupt', 'rollback']).optional(),
});

/**
 * A stream mode list in a query string, in either encoding clients use: repeated keys
 * (`stream_mode=values&stream_mode=updates`) or one JSON array (`stream_mode=["values","updates"]`).
 */
const StreamModeQuery = z.union([z.string(), z.array(z.string())]).transform((v, ctx) => {
  const list = [v].flat().flatMap((item) => {
    if (!item.startsWith('[')) return [item];
    try {
      const parsed = JSON.parse(item) as unknown;
      return Array.isArray(parsed) ? parsed.map(String) : [String(parsed)];
    } catch {
      ctx.addIssue({ code: 'custom', message: 'stream_mode is not a valid JSON array' });
      return [];
    }
  });
  for (const m of list) if (!(STREAM_MODES as readonly string[]).includes(m)) ctx.addIssue({ code: 'custom', message: `unknown stream mode "${m}"` });
  return list as Array<(typeof STREAM_MODES)[number]>;
});

const Flag = z.enum(['0', '1', 'true', 'false']).transform((v) => v === '1' || v === 'true');

export const JoinStreamQuery = z.looseObject({ stream_mode: StreamModeQuery.optional(), cancel_on_disconnect: Flag.optional() });

export const RunListQuery = z.looseObject({
  limit: limit(500).optional(),
  offset: offset.optional(),
  status: z.enum(['pending', 'running', 'error', 'success', 'timeout', 'interrupted']).optional(),
});

export const AssistantDeleteQuery = z.looseObject({ delete_threads: Flag.optional() });
export const SubgraphQuery = z.looseObject({ recurse: Flag.optional() });
