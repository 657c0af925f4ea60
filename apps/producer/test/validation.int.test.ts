import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allJobs, type Harness, startHarness } from './harness';

// Every bad request gets its status, its error code, a message naming the problem, no stack
// trace, and writes nothing: the whole ledger (rows and their updated_at) is the same after.

const LIMIT = 4_096;
let h: Harness;
let existingJobId: string;
beforeAll(async () => {
  h = await startHarness('validation', { bodyLimitBytes: LIMIT });
  existingJobId = (await h.app.inject({ method: 'POST', url: '/v1/jobs', payload: { graph: 'echo', input: {} } })).json().jobId;
});
afterAll(() => h?.close());

const json = { 'content-type': 'application/json' };
const submit = (payload: unknown): InjectOptions => ({ method: 'POST', url: '/v1/jobs', payload: JSON.stringify(payload), headers: json });

interface Case {
  name: string;
  request: () => InjectOptions;
  status: number;
  code: string;
  /** A word the message must contain (the field it names). */
  mentions?: string;
}

const cases: Case[] = [
  {
    name: 'malformed JSON',
    request: () => ({ method: 'POST', url: '/v1/jobs', payload: '{"graph": "echo", ', headers: json }),
    status: 400,
    code: 'invalid_json',
  },
  {
    name: 'text/plain body',
    request: () => ({ method: 'POST', url: '/v1/jobs', payload: 'graph=echo', headers: { 'content-type': 'text/plain' } }),
    status: 415,
    code: 'unsupported_media_type',
  },
  {
    name: 'form body',
    request: () => ({ method: 'POST', url: '/v1/jobs', payload: 'graph=echo', headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
    status: 415,
    code: 'unsupported_media_type',
  },
  {
    name: 'empty JSON body',
    request: () => ({ method: 'POST', url: '/v1/jobs', payload: '', headers: json }),
    status: 400,
    code: 'invalid_request',
    mentions: 'body',
  },
  { name: 'array body', request: () => submit([{ graph: 'echo', input: {} }]), status: 400, code: 'invalid_request', mentions: 'body' },
  { name: 'missing graph', request: () => submit({ input: {} }), status: 400, code: 'invalid_request', mentions: 'body.graph' },
  { name: 'graph of the wrong type', request: () => submit({ graph: 7, input: {} }), status: 400, code: 'invalid_request', mentions: 'body.graph' },
  { name: 'missing input', request: () => submit({ graph: 'echo' }), status: 400, code: 'invalid_request', mentions: 'body.input' },
  { name: 'unknown field', request: () => submit({ graph: 'echo', input: {}, colour: 'blue' }), status: 400, code: 'invalid_request', mentions: 'colour' },
  {
    name: 'bad multitask',
    request: () => submit({ graph: 'echo', input: {}, multitask: 'maybe' }),
    status: 400,
    code: 'invalid_request',
    mentions: 'body.multitask',
  },
  {
    name: 'maxAttempts 0',
    request: () => submit({ graph: 'echo', input: {}, maxAttempts: 0 }),
    status: 400,
    code: 'invalid_request',
    mentions: 'body.maxAttempts',
  },
  {
    name: 'metadata not an object',
    request: () => submit({ graph: 'echo', input: {}, metadata: 'x' }),
    status: 400,
    code: 'invalid_request',
    mentions: 'body.metadata',
  },
  {
    name: 'empty threadId',
    request: () => submit({ graph: 'echo', input: {}, threadId: '' }),
    status: 400,
    code: 'invalid_request',
    mentions: 'body.threadId',
  },
  {
    name: 'header and body keys differ',
    request: () => ({ ...submit({ graph: 'echo', input: {}, idempotencyKey: 'a' }), headers: { ...json, 'idempotency-key': 'b' } }),
    status: 400,
    code: 'invalid_request',
    mentions: 'Idempotency-Key',
  },
  {
    name: 'NUL character PostgreSQL cannot store',
    request: () => submit({ graph: 'echo', input: {}, metadata: { note: 'a\u0000b' } }),
    status: 400,
    code: 'invalid_request',
    mentions: 'u0000',
  },
  { name: 'unknown graph', request: () => submit({ graph: 'nope', input: {} }), status: 422, code: 'unknown_graph', mentions: 'nope' },
  {
    name: 'input the graph rejects',
    request: () => submit({ graph: 'echo', input: { steps: 'many' } }),
    status: 422,
    code: 'invalid_input',
    mentions: 'steps',
  },
  { name: 'approval without request', request: () => submit({ graph: 'approval', input: {} }), status: 422, code: 'invalid_input', mentions: 'request' },
  {
    name: 'body over the limit',
    request: () => submit({ graph: 'echo', input: {}, metadata: { blob: 'x'.repeat(LIMIT) } }),
    status: 413,
    code: 'payload_too_large',
  },
  {
    name: 'list: unknown status',
    request: () => ({ method: 'GET', url: '/v1/jobs?status=done' }),
    status: 400,
    code: 'invalid_request',
    mentions: 'query.status',
  },
  { name: 'list: limit 0', request: () => ({ method: 'GET', url: '/v1/jobs?limit=0' }), status: 400, code: 'invalid_request', mentions: 'query.limit' },
  { name: 'list: bad cursor', request: () => ({ method: 'GET', url: '/v1/jobs?cursor=abc' }), status: 400, code: 'invalid_request', mentions: 'query.cursor' },
  { name: 'list: unknown parameter', request: () => ({ method: 'GET', url: '/v1/jobs?sort=asc' }), status: 400, code: 'invalid_request', mentions: 'sort' },
  { name: 'unknown job', request: () => ({ method: 'GET', url: '/v1/jobs/missing' }), status: 404, code: 'not_found', mentions: 'missing' },
  {
    name: 'job id over 200 characters',
    request: () => ({ method: 'GET', url: `/v1/jobs/${'j'.repeat(300)}` }),
    status: 400,
    code: 'invalid_request',
    mentions: 'path.jobId',
  },
  {
    name: 'Idempotency-Key header over 200 characters',
    request: () => ({ ...submit({ graph: 'echo', input: {} }), headers: { ...json, 'idempotency-key': 'k'.repeat(201) } }),
    status: 400,
    code: 'invalid_request',
    mentions: 'header.idempotency-key',
  },
  { name: 'cancel unknown job', request: () => ({ method: 'POST', url: '/v1/jobs/missing/cancel' }), status: 404, code: 'not_found', mentions: 'missing' },
  {
    name: 'resume without a value',
    request: () => ({ method: 'POST', url: `/v1/jobs/${existingJobId}/resume`, payload: '{}', headers: json }),
    status: 400,
    code: 'invalid_request',
    mentions: 'body.resume',
  },
  {
    name: 'resolve with a bad outcome',
    request: () => ({ method: 'POST', url: `/v1/jobs/${existingJobId}/resolve`, payload: '{"outcome":"maybe","note":"n"}', headers: json }),
    status: 400,
    code: 'invalid_request',
    mentions: 'body.outcome',
  },
  {
    name: 'resolve without a note',
    request: () => ({ method: 'POST', url: `/v1/jobs/${existingJobId}/resolve`, payload: '{"outcome":"failed"}', headers: json }),
    status: 400,
    code: 'invalid_request',
    mentions: 'body.note',
  },
  {
    name: 'cancel with malformed JSON',
    request: () => ({ method: 'POST', url: `/v1/jobs/${existingJobId}/cancel`, payload: '{note', headers: json }),
    status: 400,
    code: 'invalid_json',
  },
  {
    name: 'state of a thread without jobs',
    request: () => ({ method: 'GET', url: '/v1/threads/nobody/state' }),
    status: 404,
    code: 'not_found',
    mentions: 'nobody',
  },
  { name: 'unknown route', request: () => ({ method: 'GET', url: '/v1/nothing' }), status: 404, code: 'not_found', mentions: '/v1/nothing' },
];

describe('bad requests', () => {
  it.each(cases)('$name → $status $code, nothing written', async ({ request, status, code, mentions }) => {
    const before = await allJobs(h.db);
    const r = await h.app.inject(request());
    expect(r.statusCode).toBe(status);
    const body = r.json();
    expect(Object.keys(body)).toEqual(['error']);
    expect(Object.keys(body.error).sort()).toEqual(['code', 'message']);
    expect(body.error.code).toBe(code);
    if (mentions) expect(body.error.message).toContain(mentions);
    expect(body.error.message).not.toMatch(/\n\s+at /);
    expect(await allJobs(h.db)).toEqual(before);
  });

  it('accepts a body just under the limit', async () => {
    const r = await h.app.inject(submit({ graph: 'echo', input: {}, metadata: { blob: 'x'.repeat(LIMIT - 200) } }));
    expect(r.statusCode).toBe(202);
  });

  it('accepts application/json with a charset', async () => {
    const r = await h.app.inject({
      method: 'POST',
      url: '/v1/jobs',
      payload: '{"graph":"echo","input":null}',
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(r.statusCode).toBe(202);
  });
});
