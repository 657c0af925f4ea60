import { AsyncLocalStorage } from 'node:async_hooks';
import { trace } from '@opentelemetry/api';
import { LOG_FORMAT } from '@runledger/telemetry';
import pino from 'pino';

export type Level = 'debug' | 'info' | 'warn' | 'error';

/** The fields of the run in progress (job, thread, attempt, token), added to every line logged within it. */
const runFields = new AsyncLocalStorage<Record<string, unknown>>();

/**
 * Runs `fn` with `fields` attached to every log line written inside it (also after awaits).
 * The object stays mutable: `addRunFields` fills in what is learnt later (attempt, token).
 */
export function withRunFields<T>(fields: Record<string, unknown>, fn: () => Promise<T>): Promise<T> {
  return runFields.run({ ...fields }, fn);
}

/** Adds fields to the current run's lines; does nothing outside a run. */
export function addRunFields(fields: Record<string, unknown>): void {
  const current = runFields.getStore();
  if (current) Object.assign(current, fields);
}

/**
 * Field paths pino masks in every line, beside the caller's own redaction: credentials and job
 * payloads (input, result) must never reach a log.
 */
export const LOG_REDACT_PATHS = [
  'authorization',
  '*.authorization',
  'headers.authorization',
  '*.headers.authorization',
  'password',
  '*.password',
  'apiKey',
  '*.apiKey',
  'key',
  '*.key',
  'input',
  '*.input',
  'result',
  '*.result',
];

/**
 * A structured JSON logger (pino, one line per call on stderr) with the call signature
 * `log(level, msg, fields)`. Every line carries `base`, the current run's fields (see
 * withRunFields) and, while a span is active, its `traceId` and `spanId`. Masks LOG_REDACT_PATHS.
 * Writes synchronously by default, so a line logged just before a crash is not lost.
 */
export function createLogger(
  base: Record<string, unknown>,
  minLevel: Level | 'silent' = 'info',
  destination: pino.DestinationStream = pino.destination({ dest: 2, sync: true }),
) {
  const logger = pino(
    {
      level: minLevel,
      base,
      ...LOG_FORMAT,
      redact: { paths: LOG_REDACT_PATHS, censor: '[redacted]' },
      mixin() {
        const span = trace.getActiveSpan()?.spanContext();
        return { ...runFields.getStore(), ...(span ? { traceId: span.traceId, spanId: span.spanId } : {}) };
      },
    },
    destination,
  );
  return (level: Level, msg: string, fields: Record<string, unknown> = {}) => logger[level](fields, msg);
}
