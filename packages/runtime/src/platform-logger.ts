// LangGraph Platform's global logger, which graphs reach with `getLogger()` from
// `@langchain/langgraph-sdk/logging`: the SDK looks it up on globalThis under this symbol and
// throws when it is missing (at import time, for a graph that takes it at the top of its module).
import { AsyncLocalStorageProviderSingleton } from '@langchain/core/singletons';

const GLOBAL_LOGGER = Symbol.for('langgraph.api.sdk-logger');

export type GraphLogLevel = 'debug' | 'info' | 'warn' | 'error';
/** Writes one structured line: the process's own logger (the worker adds the run's job and thread). */
export type GraphLogWrite = (level: GraphLogLevel, msg: string, fields: Record<string, unknown>) => void;

// winston's npm and cli levels, which the SDK's Logger type names, on the four Runledger writes.
const LEVELS = {
  error: 'error',
  warn: 'warn',
  info: 'info',
  help: 'info',
  data: 'info',
  prompt: 'info',
  http: 'info',
  input: 'info',
  verbose: 'debug',
  debug: 'debug',
  silly: 'debug',
} as const satisfies Record<string, GraphLogLevel>;

type LogMethod = (message: unknown, ...meta: unknown[]) => PlatformLogger;
type PlatformLogger = Record<keyof typeof LEVELS, LogMethod> & { write: GraphLogWrite };

const asFields = (value: unknown): Record<string, unknown> =>
  value instanceof Error ? { error: value.message, stack: value.stack } : (value as Record<string, unknown>);

/** winston's call forms: `(message, ...meta)` and `(infoObject)`, as one message and its fields. */
function line(message: unknown, meta: unknown[]): { msg: string; fields: Record<string, unknown> } {
  const fields: Record<string, unknown> = {};
  const words: string[] = [];
  if (typeof message === 'string') words.push(message);
  else if (message instanceof Error) {
    words.push(message.message);
    fields.stack = message.stack;
  } else if (message !== null && typeof message === 'object') {
    const { message: text, ...rest } = message as Record<string, unknown>;
    words.push(typeof text === 'string' ? text : JSON.stringify(text ?? ''));
    Object.assign(fields, rest);
  } else words.push(String(message));
  for (const m of meta) {
    if (m !== null && typeof m === 'object') Object.assign(fields, asFields(m));
    else words.push(String(m));
  }
  return { msg: words.join(' '), fields };
}

/** The graph node calling, from LangGraph's own run context (undefined outside a run). */
function nodeFields(): Record<string, unknown> {
  const config = AsyncLocalStorageProviderSingleton.getRunnableConfig() as { metadata?: Record<string, unknown> } | undefined;
  const node = config?.metadata?.langgraph_node;
  return typeof node === 'string' ? { node } : {};
}

/** A JSON line on stderr in the format of every Runledger process (`level` by name, ISO `time`). */
export const writeToStderr: GraphLogWrite = (level, msg, fields) => {
  process.stderr.write(`${JSON.stringify({ level, time: new Date().toISOString(), ...fields, msg })}\n`);
};

/**
 * Registers the Platform's global logger, writing through `write`; called again, it keeps the
 * same logger object (a graph module may hold it since its import) and swaps the writer. Each line
 * carries the calling node (`node`) and the caller's fields (`{ random: 1 }`).
 */
export function registerPlatformLogger(write: GraphLogWrite = writeToStderr): void {
  const slot = globalThis as { [GLOBAL_LOGGER]?: PlatformLogger };
  const existing = slot[GLOBAL_LOGGER];
  if (existing && typeof existing.write === 'function') {
    existing.write = write;
    return;
  }
  const logger = { write } as PlatformLogger;
  for (const [name, level] of Object.entries(LEVELS)) {
    logger[name as keyof typeof LEVELS] = (message, ...meta) => {
      const { msg, fields } = line(message, meta);
      logger.write(level, msg, { ...fields, ...nodeFields() });
      return logger;
    };
  }
  slot[GLOBAL_LOGGER] = logger;
}

/** Registers the default logger (stderr) unless a process registered its own. */
export function ensurePlatformLogger(): void {
  if (!(GLOBAL_LOGGER in globalThis)) registerPlatformLogger();
}
