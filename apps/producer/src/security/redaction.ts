import { createRedactor, REDACTED, type Redactor } from '@runledger/ledger';
import type { FastifyRequest, FastifyServerOptions } from 'fastify';

/**
 * Pino paths the producer's log never shows: credentials in headers (should a serializer ever
 * include them) and request or job payloads logged under these names.
 */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'req.headers["x-csrf-token"]',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers.cookie',
  'headers["x-api-key"]',
  'req.body',
  'body',
  'input',
  'result',
  'metadata',
  '*.password',
  '*.key',
];

type LoggerOption = FastifyServerOptions['logger'];
type LogArgs = unknown[];

/** Fastify's request fields plus the headers (user agent, content type and length, forwarded-for); the credentials among them are redacted. */
function requestWithHeaders(req: FastifyRequest) {
  return { method: req.method, url: req.url, host: req.host, remoteAddress: req.ip, remotePort: req.socket?.remotePort, headers: req.headers };
}

/**
 * The Fastify logger option with redaction added: pino's `redact` paths, and a hook that passes
 * every logged message and object through the shared redactor (known secrets, connection-string
 * passwords, sensitive field names). Request lines include the headers, minus the credentials,
 * unless `logger` brings its own serializers. `false` stays false.
 */
export function redactingLogger(logger: LoggerOption, secrets: Iterable<string | undefined>): LoggerOption {
  if (!logger) return false;
  const redactor: Redactor = createRedactor(secrets);
  const base = logger === true ? {} : (logger as Record<string, unknown>);
  return {
    serializers: { req: requestWithHeaders },
    ...base,
    redact: { paths: REDACT_PATHS, censor: REDACTED },
    hooks: {
      logMethod(this: unknown, args: LogArgs, method: (...a: LogArgs) => void) {
        method.apply(
          this,
          args.map((a) => redactor.value(a)),
        );
      },
    },
  } as LoggerOption;
}
