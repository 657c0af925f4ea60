import { isCapacityError, isConnectionError, isDiskFullError, LedgerError, type LedgerErrorCode } from '@runledger/ledger';
import type { FastifyError, FastifyInstance } from 'fastify';
import { drainRefusedBody } from './oversized-body';

/** An error with the HTTP status and the stable `code` a client sees in `{ error: { code, message } }`. */
export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

const LEDGER_STATUS: Record<LedgerErrorCode, [number, string]> = {
  NOT_FOUND: [404, 'not_found'],
  INVALID_TRANSITION: [409, 'invalid_state'],
  IDEMPOTENCY_CONFLICT: [409, 'idempotency_conflict'],
  THREAD_BUSY: [409, 'thread_busy'],
  LEASE_LOST: [409, 'lease_lost'],
  DATABASE_UNAVAILABLE: [503, 'database_unavailable'],
  MIGRATION_FAILED: [503, 'database_not_migrated'],
  SCHEMA_NOT_MIGRATED: [503, 'database_not_migrated'],
  POOLER_REFUSED: [503, 'pooler_refused'],
  INVALID_REQUEST: [400, 'invalid_request'],
  LIMIT_REACHED: [429, 'limit_reached'],
};

// Fastify's own request errors, by their FST_ code. Their messages are safe to show.
const FASTIFY_STATUS: Record<string, [number, string]> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: [415, 'unsupported_media_type'],
  FST_ERR_CTP_BODY_TOO_LARGE: [413, 'payload_too_large'],
  FST_ERR_CTP_INVALID_JSON_BODY: [400, 'invalid_json'],
  FST_ERR_CTP_EMPTY_JSON_BODY: [400, 'invalid_json'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: [400, 'invalid_request'],
  FST_ERR_VALIDATION: [400, 'invalid_request'],
  FST_ERR_BAD_URL: [400, 'invalid_url'],
  FST_ERR_MAX_PARAM_LENGTH: [414, 'uri_too_long'],
};

const UNTRANSLATABLE_CHARACTER = '22P05';

const MESSAGES: Record<string, string> = {
  unsupported_media_type: 'Send the body as JSON with Content-Type: application/json.',
  payload_too_large: 'The request body is larger than the limit (BODY_LIMIT_BYTES).',
  invalid_json: 'The request body is not valid JSON.',
  // Fastify's own messages for these two echo the whole path back.
  invalid_url: 'The URL is not valid: a percent-encoded part does not decode to UTF-8 text.',
  uri_too_long: 'A path parameter is longer than 500 characters.',
};

/** The one mapping from any thrown error to a status and a body; never a stack trace. */
export function toHttpError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const cause = (err as { cause?: unknown } | null)?.cause;
  // The disk is full (53100): the statement's transaction rolled back, and every write fails until an operator frees space.
  if (isDiskFullError(err) || isDiskFullError(cause)) {
    return new ApiError(
      503,
      'database_disk_full',
      "PostgreSQL's disk is full (SQLSTATE 53100); nothing was changed. Retry once space is freed on the database volume.",
    );
  }
  // Up but full (max_connections, out of memory): nothing was written, and a retry may pass.
  if (isCapacityError(err) || isCapacityError(cause)) {
    return new ApiError(503, 'database_busy', 'PostgreSQL is at capacity (max_connections or memory); nothing was changed. Retry later.');
  }
  // The driver's message names the database host; the log has it, the client gets the gist.
  if ((err instanceof LedgerError && err.code === 'DATABASE_UNAVAILABLE') || isConnectionError(err)) {
    return new ApiError(503, 'database_unavailable', 'PostgreSQL is unreachable; nothing was changed. Retry later.');
  }
  if (err instanceof LedgerError) {
    const [status, code] = LEDGER_STATUS[err.code] ?? [500, 'internal_error'];
    return new ApiError(status, code, err.message);
  }
  const e = err as Partial<FastifyError>;
  // PostgreSQL refuses some valid JSON in jsonb (a \u0000 in a string): the request's fault, not ours.
  if (e.code === UNTRANSLATABLE_CHARACTER) {
    return new ApiError(400, 'invalid_request', 'The body contains text PostgreSQL cannot store in JSON (such as \\u0000); remove it.');
  }
  const known = e.code ? FASTIFY_STATUS[e.code] : undefined;
  if (known) return new ApiError(known[0], known[1], MESSAGES[known[1]] ?? e.message ?? known[1]);
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return new ApiError(e.statusCode, 'bad_request', e.message ?? 'Bad request');
  }
  return new ApiError(500, 'internal_error', 'Internal error; the producer log has the details.');
}

/** `lc_error_code` of a LangChain error, or of one it wraps (`cause`). */
function langChainCode(err: unknown): string | undefined {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { lc_error_code?: unknown }).lc_error_code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

/**
 * The log line of an unexpected error: the error with its message and stack, except LangChain's
 * errors, which quote the value they refused (a message's content, a state's values): of those
 * only the name and code are logged.
 */
function logged(err: unknown, code: string): [Record<string, unknown>, string] {
  const lc = langChainCode(err);
  if (lc === undefined) return [{ err }, `${code}: ${(err as Error).message}`];
  return [{ errorName: (err as Error).name, lcErrorCode: lc }, `${code}: LangChain ${lc} (its message quotes the value, so it is not logged)`];
}

/** Installs the error and not-found handlers every route (and plugin) shares. */
export function installErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler(async (err, request, reply) => {
    const http = toHttpError(err);
    // Read the rest of a refused body first, or the client is still sending when the socket closes.
    if (http.code === 'payload_too_large') await drainRefusedBody(request.raw);
    if (http.statusCode >= 500) request.log.error(...logged(err, http.code));
    return reply.code(http.statusCode).send({ error: { code: http.code, message: http.message } });
  });
  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send({ error: { code: 'not_found', message: `No route ${request.method} ${request.url.split('?')[0]}.` } }),
  );
}
