import { type Item, LedgerStore } from '@runledger/ledger';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ApiError } from '../http-errors';
import { admissionTenant } from '../security';
import type { LangGraphDeps } from './context';

// In /openapi.json under the `langgraph` tag, from the same schemas that validate the requests.
const doc = { tags: ['langgraph'] };

/** A namespace as LangGraph's server takes it: labels neither empty nor holding a period. */
const Label = z
  .string()
  .min(1, 'namespace labels cannot be empty')
  .max(200)
  .regex(/^[^.]*$/, 'namespace labels cannot contain periods');
const Namespace = z.array(Label).max(20);

/** A field the store cannot honour: 422 naming it, nothing written (null or false, as the SDK may send, is no request). */
function refuse(body: Record<string, unknown>, field: string, why: string): void {
  const v = body[field];
  if (v !== undefined && v !== null && v !== false) throw new ApiError(422, 'unsupported', `body.${field} is not supported by Runledger's store: ${why}.`);
}
const NO_INDEX = 'it has no semantic index (langgraph.json `store.index` is not served)';

const PutItem = z.looseObject({
  namespace: Namespace.min(1, 'an item needs a namespace of at least one label'),
  key: z.string().min(1).max(1000),
  value: z.record(z.string(), z.unknown()),
});
const DeleteItem = z.looseObject({ namespace: Namespace.optional(), key: z.string().min(1).max(1000) });
const GetItem = z.looseObject({ namespace: z.string().max(4000).optional(), key: z.string().min(1).max(1000) });
const SearchItems = z.looseObject({
  namespace_prefix: Namespace,
  filter: z.record(z.string(), z.unknown()).nullable().optional(),
  limit: z.coerce.number().int().min(1).max(1000).optional(),
  offset: z.coerce.number().int().min(0).max(1_000_000).optional(),
});
const ListNamespaces = z.looseObject({
  prefix: z.array(z.string().min(1).max(200)).max(20).optional(),
  suffix: z.array(z.string().min(1).max(200)).max(20).optional(),
  max_depth: z.coerce.number().int().min(1).max(20).optional(),
  limit: z.coerce.number().int().min(1).max(1000).optional(),
  offset: z.coerce.number().int().min(0).max(1_000_000).optional(),
});

/** An item as LangGraph's server sends it: snake_case times. */
const itemView = (i: Item) => ({
  namespace: i.namespace,
  key: i.key,
  value: i.value,
  created_at: i.createdAt.toISOString(),
  updated_at: i.updatedAt.toISOString(),
});

/**
 * The store (long-term memory) at the paths `client.store` calls: items by namespace and key,
 * search under a namespace prefix, namespaces. Each tenant has its own store; graphs of its runs
 * read and write the same one (`getStore()`).
 */
export async function storeRoutes(app: FastifyInstance, d: LangGraphDeps): Promise<void> {
  const storeOf = (request: FastifyRequest) => new LedgerStore(d.ledger.pool, { tenant: admissionTenant(request) });

  app.put('/store/items', { schema: { ...doc, summary: 'Put a store item', body: PutItem } }, async (request, reply) => {
    const body = request.body as z.infer<typeof PutItem>;
    refuse(body, 'index', NO_INDEX);
    refuse(body, 'ttl', 'items do not expire');
    await storeOf(request).put(body.namespace, body.key, body.value);
    return reply.code(204).send();
  });

  app.get('/store/items', { schema: { ...doc, summary: 'Read a store item', querystring: GetItem } }, async (request) => {
    const q = request.query as z.infer<typeof GetItem>;
    const namespace = q.namespace ? q.namespace.split('.') : [];
    const item = await storeOf(request).get(namespace, q.key);
    return item ? itemView(item) : null;
  });

  app.delete('/store/items', { schema: { ...doc, summary: 'Delete a store item', body: DeleteItem } }, async (request, reply) => {
    const body = request.body as z.infer<typeof DeleteItem>;
    await storeOf(request).delete(body.namespace ?? [], body.key);
    return reply.code(204).send();
  });

  app.post('/store/items/search', { schema: { ...doc, summary: 'Search store items', body: SearchItems } }, async (request) => {
    const body = request.body as z.infer<typeof SearchItems>;
    refuse(body, 'query', NO_INDEX);
    const items = await storeOf(request).search(body.namespace_prefix, { filter: body.filter ?? undefined, limit: body.limit ?? 10, offset: body.offset ?? 0 });
    return { items: items.map(itemView) };
  });

  app.post('/store/namespaces', { schema: { ...doc, summary: 'List store namespaces', body: ListNamespaces } }, async (request) => {
    const body = (request.body ?? {}) as z.infer<typeof ListNamespaces>;
    const namespaces = await storeOf(request).listNamespaces({
      prefix: body.prefix,
      suffix: body.suffix,
      maxDepth: body.max_depth,
      limit: body.limit ?? 100,
      offset: body.offset ?? 0,
    });
    return { namespaces };
  });
}
