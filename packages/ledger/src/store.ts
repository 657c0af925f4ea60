import {
  BaseStore,
  type GetOperation,
  type Item,
  type ListNamespacesOperation,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchOperation,
} from '@langchain/langgraph-checkpoint';
import type pg from 'pg';

export type { Item } from '@langchain/langgraph-checkpoint';

import { LeaseLostError, LedgerError } from './errors';
import type { Fence } from './fenced-saver';
import { json, LedgerCore } from './ledger-core';

export interface LedgerStoreOptions {
  /** Whose store: every item read or written is this tenant's. */
  tenant: string;
  /** A graph's writes: applied only while this job's token holds its lease (LeaseLostError otherwise). Absent: the API's unfenced writes. */
  fence?: Fence;
}

/** Filter operators of LangGraph's in-memory store that a jsonb containment cannot express. */
const OPERATOR = /^\$/;

function toItem(r: Record<string, unknown>): Item {
  return {
    namespace: r.namespace as string[],
    key: r.key as string,
    value: r.value as Record<string, unknown>,
    createdAt: r.created_at as Date,
    updatedAt: r.updated_at as Date,
  };
}

/**
 * LangGraph's long-term memory (`BaseStore`) on the ledger's PostgreSQL: the store a graph gets as
 * `config.store` / `getStore()`, and the one the API's /store routes read and write. Per tenant;
 * a graph's writes are fenced by its job's lease in the same statement, so a worker that lost its
 * lease writes nothing. A replayed step's put writes the same value again (idempotent by key); a
 * replayed delete finds nothing to delete. No semantic index: `query` and `index` are refused.
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

  /** Deletes every item of this tenant's store (the API's test hook). */
  async truncate(): Promise<void> {
    await this.core.run('store_truncate', [this.options.tenant]);
  }

  private run(op: Operation): Promise<unknown> {
    if ('namespacePrefix' in op) return this.find(op);
    if ('value' in op) return this.write(op);
    if ('key' in op) return this.read(op);
    return this.namespaces(op);
  }

  private async read(op: GetOperation): Promise<Item | null> {
    const row = (await this.core.run('store_get', [this.options.tenant, op.namespace, op.key])).rows[0];
    return row ? toItem(row) : null;
  }

  private async write(op: PutOperation): Promise<void> {
    if (op.index !== undefined && op.index !== false) throw invalid('index: this store has no semantic index; put without `index`.');
    if (op.namespace.length === 0) throw invalid('namespace: an item needs a namespace of at least one label.');
    const { fence, tenant } = this.options;
    const row = (
      await this.core.run('store_put', [
        tenant,
        op.namespace,
        op.key,
        fence?.jobId ?? null,
        fence?.fencingToken ?? null,
        op.value === null ? null : json(op.value),
      ])
    ).rows[0] as { held: boolean };
    if (!row.held && fence) throw new LeaseLostError(fence.jobId, fence.fencingToken, `a store ${op.value === null ? 'delete' : 'put'}`);
  }

  private async find(op: SearchOperation): Promise<Item[]> {
    if (op.query !== undefined) throw invalid('query: this store has no semantic index; search by namespace and filter.');
    const filter = op.filter && Object.keys(op.filter).length > 0 ? op.filter : null;
    const operator = filter && Object.entries(filter).find(([k, v]) => OPERATOR.test(k) || (isObject(v) && Object.keys(v).some((x) => OPERATOR.test(x))));
    if (operator) throw invalid(`filter.${operator[0]}: comparison operators are not supported; filter by equal values.`);
    const values = [this.options.tenant, op.namespacePrefix, filter ? json(filter) : null, op.limit ?? 10, op.offset ?? 0];
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
