import {
  BaseStore,
  type GetOperation,
  type Item,
  type ListNamespacesOperation,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchItem,
  type SearchOperation,
} from '@langchain/langgraph-checkpoint';
import type pg from 'pg';

export type { Item, SearchItem } from '@langchain/langgraph-checkpoint';

import { fenced, LedgerError } from './errors';
import type { Fence } from './fenced-saver';
import { json, LedgerCore } from './ledger-core';
import { embedTexts, indexedTexts, type StoreIndex, type StoreTtl } from './store-index';

export type { StoreIndex, StoreTtl } from './store-index';

/** A put as the API makes it: LangGraph's, plus a `ttl` in minutes (null: never expires; absent: the default ttl). */
export type StorePut = PutOperation & { ttl?: number | null };
/** A read that may say whether it refreshes ttls (absent or null: `store.ttl.refresh_on_read`). */
export type StoreGet = GetOperation & { refreshTtl?: boolean | null };
export type StoreSearch = SearchOperation & { refreshTtl?: boolean | null };

export interface LedgerStoreOptions {
  /** Whose store: every item read or written is this tenant's. */
  tenant: string;
  /** A graph's writes: applied only while this job's token holds its lease (LeaseLostError otherwise). Absent: the API's unfenced writes. */
  fence?: Fence;
  /** langgraph.json `store.index`: puts embed their fields, searches may rank by a `query`. Absent: both refused. */
  index?: StoreIndex;
  /** langgraph.json `store.ttl`. */
  ttl?: StoreTtl;
}

/** Filter operators of LangGraph's in-memory store that a jsonb containment cannot express. */
const OPERATOR = /^\$/;

function toItem(r: Record<string, unknown>): SearchItem {
  return {
    namespace: r.namespace as string[],
    key: r.key as string,
    value: r.value as Record<string, unknown>,
    createdAt: r.created_at as Date,
    updatedAt: r.updated_at as Date,
    ...(r.score === undefined || r.score === null ? {} : { score: Number(r.score) }),
  };
}

/**
 * LangGraph's long-term memory (`BaseStore`) on the ledger's PostgreSQL: the store a graph gets as
 * `config.store` / `getStore()`, and the one the API's /store routes read and write. Per tenant;
 * a graph's writes are fenced by its job's lease in the same statement, so a worker that lost its
 * lease writes nothing. A replayed step's put writes the same value again (idempotent by key); a
 * replayed delete finds nothing to delete. With `index`, a put embeds its fields (the embedding
 * computed before the statement, written with the item in it) and a search with `query` ranks by
 * cosine similarity; without it `query` and `index` are refused. Expired items are never returned.
 */
export class LedgerStore extends BaseStore {
  private readonly core: StoreStatements;

  constructor(
    pool: pg.Pool,
    private readonly options: LedgerStoreOptions,
  ) {
    super();
    this.core = new StoreStatements(pool);
  }

  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const results: unknown[] = [];
    for (const op of operations) results.push(await this.run(op));
    return results as OperationResults<Op>;
  }

  /** The API's put: LangGraph's, with a `ttl`. */
  async putItem(op: StorePut): Promise<void> {
    await this.write(op);
  }

  /** The API's read, which may refresh the item's ttl. */
  getItem(op: StoreGet): Promise<Item | null> {
    return this.read(op);
  }

  /** The API's search, which may refresh the ttls of what it returns; `score` with a query. */
  searchItems(op: StoreSearch): Promise<SearchItem[]> {
    return this.find(op);
  }

  /** Deletes every item of this tenant's store (the API's test hook). */
  async truncate(): Promise<void> {
    await this.core.run('store_truncate', [this.options.tenant]);
  }

  private run(op: Operation | StorePut | StoreGet | StoreSearch): Promise<unknown> {
    if ('namespacePrefix' in op) return this.find(op);
    if ('value' in op) return this.write(op);
    if ('key' in op) return this.read(op);
    return this.namespaces(op);
  }

  /** Deletes up to `batch` expired items of every tenant (the sweep); how many. */
  async sweepExpired(batch = 1000): Promise<number> {
    return (await this.core.run('delete_expired_store_items', [batch])).rows[0].deleted as number;
  }

  /** Whether the server offers pgvector (`pg_available_extensions`); exact search runs in SQL either way. */
  async pgvectorAvailable(): Promise<boolean> {
    return (await this.core.run('pgvector_available', [])).rows[0].available as boolean;
  }

  private refresh(asked: boolean | null | undefined): boolean {
    return asked ?? this.options.ttl?.refreshOnRead ?? false;
  }

  private async read(op: StoreGet): Promise<Item | null> {
    const row = (await this.core.run('store_get', [this.options.tenant, op.namespace, op.key, this.refresh(op.refreshTtl)])).rows[0];
    return row ? toItem(row) : null;
  }

  /** The put's field paths and their vectors: none without an index, with `index: false` or for a delete. */
  private async vectors(op: StorePut): Promise<[string[], string[]]> {
    const { index } = this.options;
    if (op.index !== undefined && op.index !== false && !index)
      throw invalid('index: this store has no semantic index (langgraph.json `store.index`); put without `index`.');
    if (!index || op.value === null || op.index === false) return [[], []];
    const texts = indexedTexts(op.value, op.index ?? index.fields ?? ['$']);
    return [
      texts.map(([f]) => f),
      await embedTexts(
        index,
        texts.map(([, t]) => t),
      ),
    ];
  }

  private async write(op: StorePut): Promise<void> {
    if (op.namespace.length === 0) throw invalid('namespace: an item needs a namespace of at least one label.');
    if (op.ttl !== undefined && op.ttl !== null && !(op.ttl > 0)) throw invalid('ttl: minutes greater than 0, or null for none.');
    const { fence, tenant } = this.options;
    const [fields, vectors] = await this.vectors(op);
    const ttl = op.ttl === undefined ? (this.options.ttl?.defaultMinutes ?? null) : op.ttl;
    const row = (
      await this.core.run('store_put', [
        tenant,
        op.namespace,
        op.key,
        fence?.jobId ?? null,
        fence?.fencingToken ?? null,
        op.value === null ? null : json(op.value),
        ttl,
        fields,
        vectors,
      ])
    ).rows[0] as { held: boolean };
    if (fence) fenced(row.held, fence.jobId, fence.fencingToken, `a store ${op.value === null ? 'delete' : 'put'}`);
  }

  private async find(op: StoreSearch): Promise<SearchItem[]> {
    const { index } = this.options;
    if (op.query !== undefined && op.query !== null && !index)
      throw invalid('query: this store has no semantic index (langgraph.json `store.index`); search by namespace and filter.');
    const query = index && op.query ? ((await embedTexts(index, [op.query]))[0] ?? null) : null;
    const filter = op.filter && Object.keys(op.filter).length > 0 ? op.filter : null;
    const operator = filter && Object.entries(filter).find(([k, v]) => OPERATOR.test(k) || (isObject(v) && Object.keys(v).some((x) => OPERATOR.test(x))));
    if (operator) throw invalid(`filter.${operator[0]}: comparison operators are not supported; filter by equal values.`);
    const values = [this.options.tenant, op.namespacePrefix, filter ? json(filter) : null, op.limit ?? 10, op.offset ?? 0, query, this.refresh(op.refreshTtl)];
    return (await this.core.run('store_search', values)).rows.map(toItem);
  }

  private async namespaces(op: ListNamespacesOperation): Promise<string[][]> {
    const prefix = op.matchConditions?.find((c) => c.matchType === 'prefix')?.path ?? null;
    const suffix = op.matchConditions?.find((c) => c.matchType === 'suffix')?.path ?? null;
    const values = [this.options.tenant, prefix, suffix, op.maxDepth ?? null, op.limit, op.offset];
    return (await this.core.run('store_namespaces', values)).rows.map((r) => r.namespace as string[]);
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const invalid = (message: string) => new LedgerError('INVALID_REQUEST', message);

/** The ledger's statement runner for the store (LedgerCore's `q`, reachable from LedgerStore). */
class StoreStatements extends LedgerCore {
  run(name: string, values: unknown[]): Promise<pg.QueryResult> {
    return this.q(name, values);
  }
}
