/**
 * How a LangGraph Server API client's stream request travels with a job: the producer stores it
 * in the job's metadata at admission (under STREAM_REQUEST_KEY), the worker reads it back and
 * streams (and pays for the stream log) only when it is there.
 */

/** The stream modes of the LangGraph Server API that Runledger serves. */
export const STREAM_MODES = ['values', 'updates', 'messages', 'messages-tuple', 'custom', 'tasks', 'checkpoints', 'debug', 'events'] as const;
export type StreamMode = (typeof STREAM_MODES)[number];

/** The metadata key of a job's stream request. */
export const STREAM_REQUEST_KEY = 'runledger_stream';

export interface StreamRequest {
  modes: StreamMode[];
  /** Stream subgraph chunks too, as `<mode>|<namespace>` events. */
  subgraphs: boolean;
}

/** The stream request stored on a job, or undefined when nobody asked to stream it. */
export function streamRequestOf(metadata: Record<string, unknown> | null | undefined): StreamRequest | undefined {
  const raw = metadata?.[STREAM_REQUEST_KEY] as { modes?: unknown; subgraphs?: unknown } | undefined;
  if (!raw || !Array.isArray(raw.modes) || raw.modes.length === 0) return undefined;
  const modes = raw.modes.filter((m): m is StreamMode => (STREAM_MODES as readonly string[]).includes(m));
  return modes.length ? { modes, subgraphs: raw.subgraphs === true } : undefined;
}

/**
 * The modes to ask `graph.stream` for: `messages-tuple` is LangGraph's `messages`; legacy
 * `messages` also needs `values`; `events` is no graph mode (the worker runs `streamEvents`), and
 * alone it asks for `values`, which no client gets, so chunks keep their `[mode, chunk]` shape.
 */
export function graphStreamModes(request: StreamRequest): string[] {
  const modes = new Set<string>();
  for (const m of request.modes) {
    if (m === 'messages-tuple' || m === 'messages') modes.add('messages');
    if (m === 'messages') modes.add('values');
    if (m !== 'messages-tuple' && m !== 'messages' && m !== 'events') modes.add(m);
  }
  if (modes.size === 0) modes.add('values');
  return [...modes];
}

/** The keys of a RunnableConfig a client may see; the rest (signal, callbacks, Runledger's run control) stays in the worker. */
const CLIENT_CONFIG_KEYS = new Set(['tags', 'metadata', 'configurable', 'recursion_limit', 'run_name', 'run_id']);

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * JSON text of a chunk for a client, as serializeChunk writes it, without the worker's run
 * context: a config (an object with `configurable`) keeps only CLIENT_CONFIG_KEYS, its
 * `configurable` loses `runledger` and LangGraph's internal `__…` keys (as the reference server
 * drops them), and the worker's tenant-scoped thread id reads as the client's thread id.
 */
export function clientChunk(value: unknown, threadIds: { worker: string; client: string }): string {
  return JSON.stringify(value ?? null, function (key, v) {
    const raw = (this as Record<string, unknown>)[key] as { toDict?: () => { type: string; data: Record<string, unknown> } } | null;
    if (raw !== null && typeof raw === 'object' && typeof raw.toDict === 'function') {
      const { type, data } = raw.toDict();
      return { ...data, type };
    }
    if (v === threadIds.worker) return threadIds.client;
    if (isRecord(v) && isRecord(v.configurable)) {
      const configurable = Object.fromEntries(Object.entries(v.configurable).filter(([k]) => k !== 'runledger' && !k.startsWith('__')));
      return { ...Object.fromEntries(Object.entries(v).filter(([k]) => CLIENT_CONFIG_KEYS.has(k))), configurable };
    }
    return v;
  });
}

/** JSON text of a chunk the way the reference server writes it: LangChain objects as `{ ...data, type }`. */
export function serializeChunk(value: unknown): string {
  return JSON.stringify(value ?? null, function (key, v) {
    const raw = (this as Record<string, unknown>)[key] as { toDict?: () => { type: string; data: Record<string, unknown> } } | null;
    if (raw !== null && typeof raw === 'object' && typeof raw.toDict === 'function') {
      const { type, data } = raw.toDict();
      return { ...data, type };
    }
    return v;
  });
}

/**
 * Turns the chunks of `graph.stream` into the SSE events of the reference server: `<mode>` (or
 * `<mode>|<ns>` for subgraphs), `messages` for messages-tuple, and for legacy `messages` the
 * `messages/metadata`, `messages/partial` (the message so far) and `messages/complete` events.
 */
export class StreamEventMapper {
  private readonly partial = new Map<string, { concat?: (o: unknown) => unknown }>();
  private readonly completed = new Set<string>();

  constructor(private readonly request: StreamRequest) {}

  map(mode: string, chunk: unknown, ns: string[] = []): Array<{ event: string; data: unknown }> {
    const wants = (m: StreamMode) => this.request.modes.includes(m);
    const name = (m: string) => (ns.length ? `${m}|${ns.join('|')}` : m);
    const out: Array<{ event: string; data: unknown }> = [];
    if (mode === 'messages') {
      if (wants('messages-tuple')) out.push({ event: name('messages'), data: chunk });
      if (wants('messages')) out.push(...this.partialMessage(chunk as [{ id?: string; concat?: (o: unknown) => unknown }, unknown]));
      return out;
    }
    if (wants(mode as StreamMode)) out.push({ event: name(mode), data: mode === 'debug' || mode === 'checkpoints' ? debugView(mode, chunk) : chunk });
    // After the `values` event, as the reference server: a run's last event is its last message's `messages/complete`.
    if (mode === 'values' && wants('messages')) out.push(...this.completeMessages(chunk));
    return out;
  }

  private partialMessage([message, metadata]: [{ id?: string; concat?: (o: unknown) => unknown }, unknown]) {
    if (!message?.id) return [];
    const seen = this.partial.get(message.id);
    const out: Array<{ event: string; data: unknown }> = [];
    if (!seen) out.push({ event: 'messages/metadata', data: { [message.id]: { metadata } } });
    const merged = seen?.concat ? (seen.concat(message) as typeof message) : message;
    this.partial.set(message.id, merged);
    out.push({ event: 'messages/partial', data: [merged] });
    return out;
  }

  private completeMessages(values: unknown) {
    const list = (values as { messages?: unknown } | null)?.messages;
    const fresh = (Array.isArray(list) ? list : []).filter((m: { id?: string }) => m?.id && !this.completed.has(m.id));
    for (const m of fresh) this.completed.add(m.id);
    return fresh.length ? [{ event: 'messages/complete', data: fresh }] : [];
  }
}

type DebugCheckpoint = { config?: unknown; parentConfig?: unknown; [k: string]: unknown };

/** A checkpoint's id fields from its config, as the reference server adds them (`checkpoint`, `parent_checkpoint`). */
function checkpointOf(config: unknown): Record<string, unknown> | null {
  const c = isRecord(config) && isRecord(config.configurable) ? config.configurable : undefined;
  if (!c || typeof c.thread_id !== 'string' || typeof c.checkpoint_id !== 'string') return null;
  return { thread_id: c.thread_id, checkpoint_id: c.checkpoint_id, checkpoint_ns: c.checkpoint_ns ?? '', checkpoint_map: c.checkpoint_map ?? null };
}

/** A checkpoint as the reference server streams it: `parent_config` (snake case), with `checkpoint` and `parent_checkpoint`. */
function checkpointView({ parentConfig, ...payload }: DebugCheckpoint) {
  return { ...payload, parent_config: parentConfig, checkpoint: checkpointOf(payload.config), parent_checkpoint: checkpointOf(parentConfig) };
}

/** A `debug` chunk (its checkpoint payloads) or a `checkpoints` chunk in the reference server's shape. */
function debugView(mode: 'debug' | 'checkpoints', chunk: unknown): unknown {
  if (mode === 'checkpoints') return isRecord(chunk) ? checkpointView(chunk) : chunk;
  const debug = chunk as { type?: string; payload?: unknown };
  return debug?.type === 'checkpoint' && isRecord(debug.payload) ? { ...debug, payload: checkpointView(debug.payload) } : chunk;
}
