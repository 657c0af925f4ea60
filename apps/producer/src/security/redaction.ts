import { createRedactor, REDACTED, type Redactor } from '@runledger/ledger';
import { LOG_FORMAT } from '@runledger/telemetry';
import type { FastifyRequest, FastifyServerOptions } from 'fastify';

/**
 * Pino paths the producer's log never shows: credentials in headers (should a serializer ever
 * include them) and request or job payloads logged under these names.
 */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["proxy-authorization"]',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'req.headers["x-csrf-token"]',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers["proxy-authorization"]',
  'headers["x-api-key"]',
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

/**
 * The only request headers a log line shows. Any other header may carry a credential under a name
 * nobody foresaw (X-Api-Key, Proxy-Authorization, X-Auth-Token, a cookie), so it is left out.
 */
export const LOGGED_HEADERS = [
  'host',
  'user-agent',
  'accept',
  'content-type',
  'content-length',
  'origin',
  'sec-fetch-site',
  'x-forwarded-for',
  'x-forwarded-proto',
  'x-request-id',
  'traceparent',
  // Where a reconnecting stream client resumes (an event id, no secret).
  'last-event-id',
] as const;

/** The query parameters whose values a log line shows (the list filters); every other value is redacted. */
export const LOGGED_QUERY_PARAMS = new Set(['status', 'graph', 'threadId', 'limit', 'cursor']);

/**
 * `url` as a log line shows it: no user info (`http://user:key@host/…`), and only the values of
 * LOGGED_QUERY_PARAMS (`?api_key=…`, `?token=…` and any unknown parameter read `[redacted]`).
 */
export function loggableUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url, 'http://_');
  } catch {
    return REDACTED;
  }
  const query = [...parsed.searchParams].map(
    ([name, value]) => `${encodeURIComponent(name)}=${LOGGED_QUERY_PARAMS.has(name) ? encodeURIComponent(value) : REDACTED}`,
  );
  const origin = /^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? `${parsed.protocol}//${parsed.host}` : '';
  return `${origin}${parsed.pathname}${query.length > 0 ? `?${query.join('&')}` : ''}`;
}

/** The allowed headers of a request (LOGGED_HEADERS). */
function loggableHeaders(headers: FastifyRequest['headers']): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of LOGGED_HEADERS) if (headers[name] !== undefined) out[name] = headers[name];
  return out;
}

/**
 * The Fastify logger option with redaction added: pino's `redact` paths, and a hook that passes
 * every logged message and object through the shared redactor (known secrets, connection-string
 * passwords, sensitive field names). Request lines show the URL through loggableUrl and only the
 * LOGGED_HEADERS, also through the redactor, unless `logger` brings its own serializers. `false`
 * stays false.
 */
export function redactingLogger(logger: LoggerOption, secrets: Iterable<string | undefined>): LoggerOption {
  if (!logger) return false;
  const redactor: Redactor = createRedactor(secrets);
  const base = logger === true ? {} : (logger as Record<string, unknown>);
  // Serializers run after the logMethod hook, so the request line passes the redactor here.
  const req = (request: FastifyRequest) =>
    redactor.value({
      method: request.method,
      url: loggableUrl(request.url),
      host: request.host,
      remoteAddress: request.ip,
      remotePort: request.socket?.remotePort,
      headers: loggableHeaders(request.headers),
    });
  return {
    ...LOG_FORMAT,
    serializers: { req },
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
