import type { FastifyCorsOptions } from '@fastify/cors';
import type { LangGraphCors } from '@runledger/runtime';

/** Which browser origins may call the API, and how (langgraph.json's `http.cors`, in Runledger's terms). */
export interface CorsPolicy {
  /** Listed origins and patterns, or `*` for any. */
  origins: Array<string | RegExp> | '*';
  methods?: string[];
  headers?: string[];
  exposeHeaders?: string[];
  credentials?: boolean;
  maxAgeSeconds?: number;
}

/** Any web app served from this machine, on any port: what `npm start` and `runledger dev` allow, as `langgraph dev` lets a local app in. */
export const LOCAL_ORIGINS: CorsPolicy = { origins: [/^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d{1,5})?$/] };

/** The response headers the SDK reads: a run's id (Content-Location), a stream to rejoin (Location), pages. */
const EXPOSED = ['Content-Location', 'Location', 'X-Pagination-Total', 'X-Pagination-Next'];

/** A langgraph.json `http.cors` as a policy; with neither origins nor a regex it allows any origin, as LangGraph's server does. */
export function projectCors(c: LangGraphCors): CorsPolicy {
  const listed = c.allow_origins ?? [];
  const origins = c.allow_origin_regex ? [...listed, new RegExp(c.allow_origin_regex)] : listed;
  return {
    origins: origins.length === 0 || listed.includes('*') ? '*' : origins,
    methods: c.allow_methods,
    headers: c.allow_headers,
    exposeHeaders: c.expose_headers,
    credentials: c.allow_credentials,
    maxAgeSeconds: c.max_age,
  };
}

/**
 * The producer's CORS: RUNLEDGER_CORS_ORIGINS when set, else the project's `http.cors`, else local
 * origins for a dev stack (RUNLEDGER_DEV), else none (browsers allow same-origin calls only).
 */
export function corsPolicy(envOrigins: string[] | '*' | undefined, project: LangGraphCors | undefined, dev: boolean): CorsPolicy | undefined {
  if (envOrigins) return { origins: envOrigins };
  if (project) return projectCors(project);
  return dev ? LOCAL_ORIGINS : undefined;
}

/**
 * CORS for browsers that call the API from a web app (the LangGraph SDK's `useStream`): the
 * request headers the SDK sends (`x-api-key`, `Last-Event-ID` on a reconnect) and the response
 * headers it reads (always exposed, as LangGraph's server adds them to a configured list).
 * Only allowed origins get the headers.
 */
export function corsOptions(policy: CorsPolicy): FastifyCorsOptions {
  const exposed = new Map([...EXPOSED, ...(policy.exposeHeaders ?? [])].map((h) => [h.toLowerCase(), h]));
  return {
    origin: policy.origins,
    methods: policy.methods ?? ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: policy.headers ?? ['Content-Type', 'Authorization', 'X-Api-Key', 'Last-Event-ID', 'Idempotency-Key'],
    exposedHeaders: [...exposed.values()],
    credentials: policy.credentials ?? false,
    maxAge: policy.maxAgeSeconds ?? 600,
  };
}
