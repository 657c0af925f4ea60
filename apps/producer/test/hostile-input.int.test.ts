import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawExchange } from '../../../test/support/raw-http';
import { MAX_JSON_DEPTH } from '../src/json-body';
import { SECURITY_HEADERS } from '../src/security';
import { KEYS, type SecuredHarness, startSecuredApp, TWO_TENANTS } from './security-harness';

// Input that answered 500, or Fastify's own error shape without the security headers (issue 22,
// item 4): each now answers its 4xx as { error: { code, message } } with every security header,
// and writes nothing.

let h: SecuredHarness;
let port: number;
let jobId: string;
beforeAll(async () => {
  h = await startSecuredApp('hostile_input', { security: { ...TWO_TENANTS, requestTimeoutMs: 1_000, connectionTimeoutMs: 30_000 } });
  jobId = (await h.as(KEYS.acme, { method: 'POST', url: '/v1/jobs', payload: { graph: 'echo', input: {} } })).json().jobId;
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  port = (h.app.server.address() as { port: number }).port;
});
afterAll(() => h?.close());

const json = { 'content-type': 'application/json' };
const post = (url: string, payload: string, headers: Record<string, string> = json): InjectOptions => ({ method: 'POST', url, payload, headers });
const deep = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
/** Every job row as stored, to prove a refused request changed nothing. */
const ledgerRows = async () => (await h.db.ledger.pool.query('SELECT * FROM jobs ORDER BY job_id')).rows;

/** Checks the error shape, its code and every security header; returns the message. */
function expectApiError(headers: Record<string, unknown>, body: string, code: string): string {
  const parsed = JSON.parse(body);
  expect(Object.keys(parsed)).toEqual(['error']);
  expect(Object.keys(parsed.error).sort()).toEqual(['code', 'message']);
  expect(parsed.error.code).toBe(code);
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) expect(headers[name], name).toBe(value);
  return parsed.error.message as string;
}

describe('bad input answers 4xx, not 500, and writes nothing', () => {
  const cases: Array<[string, () => InjectOptions, number, string, string]> = [
    ['a NUL in a job id', () => ({ url: '/v1/jobs/a%00b' }), 400, 'invalid_request', 'jobId'],
    ['a NUL in a job id (events)', () => ({ url: '/v1/jobs/a%00b/events' }), 400, 'invalid_request', 'jobId'],
    ['a NUL in a job id (cancel)', () => ({ method: 'POST', url: '/v1/jobs/a%00b/cancel' }), 400, 'invalid_request', 'jobId'],
    ['a NUL in a thread id (state)', () => ({ url: '/v1/threads/a%00b/state' }), 400, 'invalid_request', 'threadId'],
    ['a NUL in a graph filter', () => ({ url: '/v1/jobs?graph=a%00b' }), 400, 'invalid_request', 'query.graph'],
    ['a NUL in a thread filter', () => ({ url: '/v1/jobs?threadId=a%00b' }), 400, 'invalid_request', 'query.threadId'],
    ['a NUL in a thread id', () => post('/v1/jobs', '{"graph":"echo","input":{},"threadId":"a\\u0000b"}'), 400, 'invalid_request', 'body.threadId'],
    [
      'a NUL in an idempotency key',
      () => post('/v1/jobs', '{"graph":"echo","input":{},"idempotencyKey":"a\\u0000"}'),
      400,
      'invalid_request',
      'body.idempotencyKey',
    ],
    [
      'a lone surrogate in metadata',
      () => post('/v1/jobs', '{"graph":"echo","input":{},"metadata":{"n":"\\ud800"}}'),
      400,
      'invalid_request',
      'body.metadata.n',
    ],
    ['a lone surrogate in a metadata key', () => post('/v1/jobs', '{"graph":"echo","input":{},"metadata":{"\\udc00":1}}'), 400, 'invalid_request', 'surrogate'],
    ['metadata nested 5,000 levels', () => post('/v1/jobs', `{"graph":"echo","input":{},"metadata":${deep(5_000)}}`), 400, 'invalid_request', 'nested'],
    ['input nested 5,000 levels', () => post('/v1/jobs', `{"graph":"echo","input":${deep(5_000)}}`), 400, 'invalid_request', 'nested'],
    ['a resume value nested 5,000 levels', () => post(`/v1/jobs/${jobId}/resume`, `{"resume":${deep(5_000)}}`), 400, 'invalid_request', 'body.resume'],
    // Refused by name, not as "not valid JSON": the JSON is valid, the field name is the problem.
    [
      'a __proto__ field',
      () => post('/v1/jobs', '{"graph":"echo","input":{"__proto__":{"steps":2}}}'),
      400,
      'invalid_request',
      'body.input: the field name "__proto__"',
    ],
    [
      'a constructor.prototype field',
      () => post('/v1/jobs', '{"graph":"echo","input":{},"metadata":{"constructor":{"prototype":{"x":1}}}}'),
      400,
      'invalid_request',
      'body.metadata: the field name "constructor"',
    ],
    ['a cancel note with a NUL', () => post(`/v1/jobs/${jobId}/cancel`, '{"note":"a\\u0000"}'), 400, 'invalid_request', 'body.note'],
    [
      'a UTF-16 JSON body',
      () =>
        post('/v1/jobs', Buffer.from('\ufeff{"graph":"echo","input":{}}', 'utf16le').toString('latin1'), {
          'content-type': 'application/json; charset=utf-16',
        }),
      415,
      'unsupported_media_type',
      'UTF-8',
    ],
  ];

  it.each(cases)('%s', async (_name, request, status, code, mentions) => {
    const before = await ledgerRows();
    const r: LightMyRequestResponse = await h.as(KEYS.acme, request());
    expect(r.statusCode, r.body.slice(0, 300)).toBe(status);
    expect(expectApiError(r.headers, r.body, code)).toContain(mentions);
    expect(await ledgerRows()).toEqual(before);
  });

  it(`still accepts nesting up to ${MAX_JSON_DEPTH} levels and well-formed Unicode`, async () => {
    const body = `{"graph":"echo","input":{},"metadata":{"emoji":"\\ud83d\\ude00","deep":${deep(MAX_JSON_DEPTH - 3)}}}`;
    const r = await h.as(KEYS.acme, post('/v1/jobs', body));
    expect(r.statusCode, r.body).toBe(202);
  });
});

/** The responses of a raw exchange, each with its status, lower-cased headers and body. */
function parseResponses(raw: string) {
  const out: Array<{ status: number; headers: Record<string, string>; body: string }> = [];
  let rest = raw;
  while (rest.startsWith('HTTP/1.1 ')) {
    const end = rest.indexOf('\r\n\r\n');
    const lines = rest.slice(0, end).split('\r\n');
    const headers = Object.fromEntries(lines.slice(1).map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
    const length = Number(headers['content-length'] ?? 0);
    out.push({ status: Number(lines[0]?.split(' ')[1]), headers, body: rest.slice(end + 4, end + 4 + length) });
    rest = rest.slice(end + 4 + length);
  }
  return out;
}

describe('errors raised before routing answer in the API shape, with the security headers', () => {
  const auth = `Authorization: Bearer ${KEYS.acme}\r\n`;
  const cases: Array<[string, string, number, string]> = [
    ['a 600-character path parameter', `GET /v1/jobs/${'x'.repeat(600)} HTTP/1.1\r\nHost: x\r\n${auth}Connection: close\r\n\r\n`, 414, 'uri_too_long'],
    ['a malformed percent-encoding', `GET /v1/jobs/%E0%A4%A HTTP/1.1\r\nHost: x\r\n${auth}Connection: close\r\n\r\n`, 400, 'invalid_url'],
    ['a 20 KB query string', `GET /v1/jobs?q=${'x'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n${auth}\r\n`, 431, 'headers_too_large'],
    ['a request the HTTP parser refuses', 'NOT HTTP AT ALL\r\n\r\n', 400, 'bad_request'],
    ['half a request past the request timeout', `GET /v1/jobs HTTP/1.1\r\nHost: x\r\n${auth}`, 408, 'request_timeout'],
  ];

  it.each(cases)('%s', async (_name, request, status, code) => {
    const [answer, ...more] = parseResponses(await rawExchange(port, request));
    expect(answer, 'an HTTP answer').toBeDefined();
    expect(answer?.status).toBe(status);
    expectApiError(answer?.headers ?? {}, answer?.body ?? '{}', code);
    expect(more).toEqual([]);
  });

  it('a short Content-Length: the leftover bytes answer 400 bad_request in the API shape, and nothing is written', async () => {
    const before = await ledgerRows();
    const body = '{}{"graph":"echo","input":{}}';
    const raw = await rawExchange(port, `POST /v1/jobs HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: 2\r\n\r\n${body}`);
    // The parser fails on the leftover bytes before the first request is answered; the connection closes with that answer.
    const [answer, ...more] = parseResponses(raw);
    expect(answer?.status).toBe(400);
    expectApiError(answer?.headers ?? {}, answer?.body ?? '{}', 'bad_request');
    expect(more).toEqual([]);
    expect(await ledgerRows()).toEqual(before);
  });
});
