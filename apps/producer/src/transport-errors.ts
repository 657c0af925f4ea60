import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { toHttpError } from './http-errors';
import { SECURITY_HEADERS } from './security';

// Errors Fastify raises before a route (and its hooks) runs, and errors of the HTTP parser before
// Fastify sees a request: without these handlers they answered in Fastify's own shape, without
// the security headers.

/** Fastify's `frameworkErrors` option: a malformed percent-encoding (400) or a too long path parameter (414), in the API's error shape. */
export function frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const http = toHttpError(error);
  // This reply skips the onSend hooks (no route matched yet), so the headers are set here.
  void reply
    .code(http.statusCode)
    .headers(SECURITY_HEADERS)
    .send({ error: { code: http.code, message: http.message } });
}

const CLIENT_ERRORS: Record<string, [number, string, string]> = {
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'request_timeout', 'The request did not arrive in full within the request timeout (REQUEST_TIMEOUT_MS).'],
  HPE_HEADER_OVERFLOW: [431, 'headers_too_large', 'The request line and headers exceed 16 KiB; send a shorter URL or fewer headers.'],
};
const MALFORMED: [number, string, string] = [400, 'bad_request', 'The request is not valid HTTP/1.1.'];

/** The raw HTTP response for a client error: the API's error shape, the security headers, and the connection closed. */
export function clientErrorResponse(errorCode: string | undefined): string {
  const [status, code, message] = (errorCode && CLIENT_ERRORS[errorCode]) || MALFORMED;
  const body = JSON.stringify({ error: { code, message } });
  const headers = {
    ...SECURITY_HEADERS,
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    connection: 'close',
  };
  return `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}\r\n${body}`;
}

/**
 * Fastify's `clientErrorHandler` option (the server's 'clientError' event): a request timeout →
 * 408, headers over Node's 16 KiB limit → 431, anything else the HTTP parser refuses → 400.
 */
export function clientErrorHandler(this: FastifyInstance, err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  // Only the code: the error's rawPacket holds the request's bytes, keys included.
  this.log.debug({ code: err.code }, 'client error');
  // As Node does: no answer on a socket whose response already started.
  const started = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
  if (socket.writable && !started) socket.end(clientErrorResponse(err.code));
  socket.destroySoon();
}
