/**
 * How a LangGraph Server API client's stream request travels with a job: the producer stores it
 * in the job's metadata at admission (under STREAM_REQUEST_KEY), the worker reads it back and
 * streams (and pays for the stream log) only when it is there.
 */

/** The stream modes of the LangGraph Server API that Runledger serves. */
export const STREAM_MODES = ['values', 'updates', 'messages', 'messages-tuple', 'custom', 'tasks', 'checkpoints', 'debug'] as const;
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

/** The modes to ask `graph.stream` for: `messages-tuple` is LangGraph's `messages`; legacy `messages` also needs `values`. */
export function graphStreamModes(request: StreamRequest): string[] {
  const modes = new Set<string>();
  for (const m of request.modes) {
    if (m === 'messages-tuple' || m === 'messages') modes.add('messages');
    if (m === 'messages') modes.add('values');
    if (m !== 'messages-tuple' && m !== 'messages') modes.add(m);
  }
  return [...modes];
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
    if (mode === 'values' && wants('messages')) out.push(...this.completeMessages(chunk));
    if (wants(mode as StreamMode)) out.push({ event: name(mode), data: chunk });
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
