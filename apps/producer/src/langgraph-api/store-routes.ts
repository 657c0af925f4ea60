import { LedgerStore, type SearchItem } from '@runledger/ledger';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ApiError } from '../http-errors';
import { ErrorBody } from '../schemas';
import { admissionTenant } from '../security';
import type { AuthFilters } from './auth-filters';
import { authFiltersOf } from './auth-hook';
import type { LangGraphDeps } from './context';
import { filteredPage, storeMatches } from './store-auth';

// In /openapi.json under the `langgraph` tag, from the same schemas that validate the requests.
const doc = { tags: ['langgraph'] };

/** A namespace as LangGraph's store takes it: labels neither empty nor holding a period, a colon or NUL; not under the root `langgraph`. */
const Label = z
  .string()
  .min(1, 'namespace labels cannot be empty')
  .max(200)
  .regex(/^[^.:\0]*$/, 'namespace labels cannot contain periods, colons or NUL');
const Namespace = z
  .array(Label)
  .max(20)
  .refine((ns) => ns[0] !== 'langgraph', 'the root namespace label "langgraph" is reserved');

/** A field the store cannot honour: 422 naming it, nothing written (null or false, as the SDK may send, is no request). */
function refuse(body: Record<string, unknown>, field: string, why: string): void {
  const v = body[field];
  if (v !== undefined && v !== null && v !== false) throw new ApiError(422, 'unsupported', `body.${field} is not supported by Runledger's store: ${why}.`);
}
const NO_INDEX = 'it has no semantic index (langgraph.json has no `store.index`)';
/** A JSON path of the value to embed, as LangGraph's stores take them (`$`, `a.b`, `a[*].b`, `{a,b}`). */
const FieldPath = z.string().min(1).max(500);
/** `refresh_ttl` in a query string: LangGraph's true/false (also 1/0, yes/no). */
const QueryBoolean = z
  .enum(['true', 'false', '1', '0', 'yes', 'no', 'True', 'False'])
  .transform((v) => ['true', '1', 'yes', 'True'].includes(v))
  .optional();

/** An item's key: any text but NUL (PostgreSQL text cannot hold it). */
const Key = z
  .string()
  .min(1)
  .max(1000)
  .regex(/^[^\0]+$/, 'key cannot contain NUL');

const PutItem = z.looseObject({
  namespace: Namespace.min(1, 'an item needs a namespace of at least one label'),
  key: Key,
  value: z.record(z.string(), z.unknown()),
  index: z
    .union([z.literal(false), z.array(FieldPath).min(1).max(50)])
    .nullable()
    .optional(),
  ttl: z.number().positive().max(525_600_000).nullable().optional(),
});
const DeleteItem = z.looseObject({ namespace: Namespace.optional(), key: Key });
const GetItem = z.looseObject({
  namespace: z
    .string()
    .max(4000)
    .regex(/^[^\0:]*$/, 'namespace labels cannot contain colons or NUL')
    .optional(),
  key: Key,
  refresh_ttl: QueryBoolean,
});
const SearchItems = z.looseObject({
  namespace_prefix: Namespace,
  filter: z.record(z.string(), z.unknown()).nullable().optional(),
  limit: z.coerce.number().int().min(1).max(1000).optional(),
  offset: z.coerce.number().int().min(0).max(1_000_000).optional(),
  query: z.string().max(10_000).nullable().optional(),
  refresh_ttl: z.boolean().nullable().optional(),
});
const ListNamespaces = z.looseObject({
  prefix: Namespace.optional(),
  suffix: z.array(Label).max(20).optional(),
  max_depth: z.coerce.number().int().min(1).max(20).optional(),
  limit: z.coerce.number().int().min(1).max(1000).optional(),
  offset: z.coerce.number().int().min(0).max(1_000_000).optional(),
});

/** LangGraph's own namespace rules (no label with a period or colon, none under `langgraph`) refuse the request (400), not the server. */
async function checked<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    if (err instanceof Error && err.name === 'InvalidNamespaceError') throw new ApiError(400, 'invalid_request', err.message);
    throw err;
  }
}

/** An item as LangGraph's server sends it: snake_case times; `score` in a search with a query, for an item with vectors. */
const itemView = (i: SearchItem) => ({
  namespace: i.namespace,
  key: i.key,
  value: i.value,
  created_at: i.createdAt.toISOString(),
  updated_at: i.updatedAt.toISOString(),
  ...(i.score === undefined ? {} : { score: i.score }),
});

/**
 * Custom auth before a put or delete: another user's item answers as a missing one (404); a write
 * outside the handler's filter is refused (403). Without a filter, anything goes.
 */
async function mayWrite(store: LedgerStore, filters: AuthFilters | undefined, namespace: string[], key: string, value?: Record<string, unknown>) {
  if (!filters) return;
  const current = await checked(store.getItem({ namespace, key, refreshTtl: false }));
  if (current && !storeMatches(filters, current.namespace, current.key, current.value)) throw new ApiError(404, 'not_found', 'Item not found.');
  if (!storeMatches(filters, namespace, key, value)) throw new ApiError(403, 'forbidden', 'Not authorized.');
}

/**
 * The store (long-term memory) at the paths `client.store` calls: items by namespace and key,
 * search under a namespace prefix, namespaces. Each tenant has its own store; graphs of its runs
 * read and write the same one (`getStore()`).
 */
export async function storeRoutes(app: FastifyInstance, d: LangGraphDeps): Promise<void> {
  const storeOf = (request: FastifyRequest) => new LedgerStore(d.ledger.pool, { tenant: admissionTenant(request), index: d.store?.index, ttl: d.store?.ttl });

  app.put(
    '/store/items',
    { schema: { ...doc, summary: 'Put a store item', body: PutItem, response: { 204: z.null(), 422: ErrorBody } } },
    async (request, reply) => {
      const body = request.body as z.infer<typeof PutItem>;
      if (!d.store?.index) refuse(body, 'index', NO_INDEX);
      const { namespace, key, value, index, ttl } = body;
      const store = storeOf(request);
      await mayWrite(store, authFiltersOf(request), namespace, key, value);
      await checked(store.putItem({ namespace, key, value, index: index ?? undefined, ttl }));
      return reply.code(204).send();
    },
  );

  app.get('/store/items', { schema: { ...doc, summary: 'Read a store item', querystring: GetItem } }, async (request) => {
    const q = request.query as z.infer<typeof GetItem>;
    const namespace = q.namespace ? q.namespace.split('.') : [];
    const item = await checked(storeOf(request).getItem({ namespace, key: q.key, refreshTtl: q.refresh_ttl }));
    if (item && !storeMatches(authFiltersOf(request), item.namespace, item.key, item.value)) throw new ApiError(404, 'not_found', 'Item not found.');
    return item ? itemView(item) : null;
  });

  app.delete(
    '/store/items',
    { schema: { ...doc, summary: 'Delete a store item', body: DeleteItem, response: { 204: z.null(), 422: ErrorBody } } },
    async (request, reply) => {
      const body = request.body as z.infer<typeof DeleteItem>;
      const store = storeOf(request);
      await mayWrite(store, authFiltersOf(request), body.namespace ?? [], body.key);
      await checked(store.delete(body.namespace ?? [], body.key));
      return reply.code(204).send();
    },
  );

  app.post(
    '/store/items/search',
    { schema: { ...doc, summary: 'Search store items', body: SearchItems, response: { 200: z.looseObject({ items: z.array(z.unknown()) }), 422: ErrorBody } } },
    async (request) => {
      const body = request.body as z.infer<typeof SearchItems>;
      if (!d.store?.index) refuse(body, 'query', NO_INDEX);
      const store = storeOf(request);
      const filters = authFiltersOf(request);
      const page = (offset: number, limit: number) =>
        checked(
          store.searchItems({
            namespacePrefix: body.namespace_prefix,
            filter: body.filter ?? undefined,
            limit,
            offset,
            query: body.query ?? undefined,
            refreshTtl: body.refresh_ttl,
          }),
        );
      const items = filters
        ? await filteredPage(page, (i) => storeMatches(filters, i.namespace, i.key, i.value), body.offset ?? 0, body.limit ?? 10)
        : await page(body.offset ?? 0, body.limit ?? 10);
      return { items: items.map(itemView) };
    },
  );

  app.post('/store/namespaces', { schema: { ...doc, summary: 'List store namespaces', body: ListNamespaces } }, async (request) => {
    const body = (request.body ?? {}) as z.infer<typeof ListNamespaces>;
    const store = storeOf(request);
    const filters = authFiltersOf(request);
    const page = (offset: number, limit: number) =>
      checked(store.listNamespaces({ prefix: body.prefix, suffix: body.suffix, maxDepth: body.max_depth, limit, offset }));
    const namespaces = filters
      ? await filteredPage(page, (n) => storeMatches(filters, n), body.offset ?? 0, body.limit ?? 100)
      : await page(body.offset ?? 0, body.limit ?? 100);
    return { namespaces };
  });
}
