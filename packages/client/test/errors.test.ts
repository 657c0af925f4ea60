// Which error answers the client retries with the same idempotency key (submit's retries, and
// any caller that checks `retryable`): no answer, 408, 5xx yes; every other 4xx no.
import { describe, expect, it } from 'vitest';
import { RunledgerApiError } from '../src/errors';

describe('RunledgerApiError.retryable', () => {
  it.each([
    [0, 'network_error', true],
    [408, 'request_timeout', true],
    [500, 'internal', true],
    [503, 'database_busy', true],
    [400, 'invalid_request', false],
    [401, 'unauthorized', false],
    [409, 'idempotency_conflict', false],
    [413, 'body_too_large', false],
    [422, 'unknown_graph', false],
    [429, 'rate_limited', false],
  ])('status %i (%s): %s', (status, code, retryable) => {
    expect(new RunledgerApiError(status, code, 'x').retryable).toBe(retryable);
  });
});
