import type { FastifyCorsOptions } from '@fastify/cors';

/**
 * CORS for browsers that call the API from a web app (the LangGraph SDK's `useStream`): the
 * request headers the SDK sends (`x-api-key`, `Last-Event-ID` on a reconnect) and the response
 * headers it reads (`Content-Location` for a run's id, `Location` to rejoin a stream,
 * `X-Pagination-*`). `*` allows any origin; otherwise only the listed ones get the headers.
 */
export function corsOptions(origins: string[] | '*'): FastifyCorsOptions {
  return {
    origin: origins === '*' ? '*' : origins,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: ['Content-Type', 'Authorization', 'X-Api-Key', 'Last-Event-ID', 'Idempotency-Key'],
    exposedHeaders: ['Content-Location', 'Location', 'X-Pagination-Total', 'X-Pagination-Next'],
    maxAge: 600,
  };
}
