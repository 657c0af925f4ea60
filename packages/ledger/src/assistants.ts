import { sealContext } from './crypto';
import { json, LedgerCore } from './ledger-core';

type Json = Record<string, unknown>;

/** What a version of an assistant holds (LangGraph Server API fields). */
export interface AssistantFields {
  graphId: string;
  name: string;
  description: string | null;
  config: Json;
  context: Json;
  metadata: Json;
}

/** A version of a tenant's stored assistant; versions never change once written. */
export interface AssistantVersion extends AssistantFields {
  assistantId: string;
  version: number;
  createdAt: Date;
}

/** A tenant's assistant at its current version (`version`); `lastVersion` is the highest it has. */
export interface StoredAssistant extends AssistantFields {
  assistantId: string;
  version: number;
  lastVersion: number;
  createdAt: Date;
  updatedAt: Date;
}

/** An assistant the caller serves without storing it (one per graph): searched and counted with the stored ones. */
export interface BuiltInAssistant {
  assistantId: string;
  graphId: string;
  name: string;
  description: string | null;
  metadata: Json;
  createdAt: Date;
}

export const ASSISTANT_SORT_COLUMNS = ['assistant_id', 'graph_id', 'name', 'created_at', 'updated_at'] as const;

export interface AssistantFilter {
  graphId?: string;
  /** A case-insensitive substring of the name. */
  name?: string;
  /** Assistants whose metadata contains this object. */
  metadata?: Json;
}

export interface AssistantSearch extends AssistantFilter {
  sortBy?: (typeof ASSISTANT_SORT_COLUMNS)[number];
  sortOrder?: 'asc' | 'desc';
  limit?: number;
  offset?: number;
}

const SEALED = ['description', 'config', 'context'] as const;

/**
 * Stored assistants of the LangGraph Server API (`assistants`, `assistant_versions`), per tenant.
 * Each change is a new version; config, context and description are sealed under the payload
 * codec, bound to tenant, assistant and version.
 */
export class StoredAssistants extends LedgerCore {
  private sealed(tenant: string, id: string, version: number, f: Pick<AssistantFields, (typeof SEALED)[number]>): unknown[] {
    return SEALED.map((field) => {
      const value = f[field];
      return json(value === null ? null : this.seal(value, sealContext.assistantVersion(tenant, id, version, field)));
    });
  }

  private opened(tenant: string, r: Json): AssistantFields {
    const open = (field: (typeof SEALED)[number]) => {
      const value = r[field];
      return value === null || !this.crypto
        ? value
        : this.crypto.open(value, sealContext.assistantVersion(tenant, r.assistant_id as string, Number(r.version), field));
    };
    return {
      graphId: r.graph_id as string,
      name: r.name as string,
      description: (open('description') as string | null) ?? null,
      config: (open('config') as Json) ?? {},
      context: (open('context') as Json) ?? {},
      metadata: (r.metadata as Json) ?? {},
    };
  }

  private toAssistant(tenant: string, r: Json): StoredAssistant {
    const version = Number(r.version);
    const { assistant_id, created_at, updated_at, last_version } = r as Record<string, unknown>;
    return {
      ...this.opened(tenant, r),
      assistantId: assistant_id as string,
      version,
      lastVersion: last_version === undefined || last_version === null ? version : Number(last_version),
      createdAt: created_at as Date,
      updatedAt: updated_at as Date,
    };
  }

  /** Creates a tenant's assistant at version 1; undefined when the tenant already has one of that id. */
  async create(tenant: string, assistantId: string, f: AssistantFields): Promise<StoredAssistant | undefined> {
    const values = [tenant, assistantId, f.graphId, f.name, ...this.sealed(tenant, assistantId, 1, f), json(f.metadata)];
    const row = (await this.q('create_assistant', values)).rows[0];
    return row ? this.toAssistant(tenant, row) : undefined;
  }

  /** A tenant's assistant at its current version; undefined when it has none of that id. */
  async get(tenant: string, assistantId: string): Promise<StoredAssistant | undefined> {
    const row = (await this.q('get_assistant', [tenant, assistantId])).rows[0];
    return row ? this.toAssistant(tenant, row) : undefined;
  }

  /**
   * Writes a new version (the highest so far + 1) from the current one with `patch` applied
   * (metadata merged into the current metadata, the other fields replaced) and makes it current.
   * Undefined when the tenant has no assistant of that id.
   */
  async update(tenant: string, assistantId: string, patch: Partial<AssistantFields>): Promise<StoredAssistant | undefined> {
    return this.inTransaction(async (client) => {
      if ((await this.q('lock_assistant', [tenant, assistantId], client)).rowCount === 0) return undefined;
      const current = this.toAssistant(tenant, (await this.q('get_assistant', [tenant, assistantId], client)).rows[0] as Json);
      const { metadata, ...rest } = patch;
      const next: AssistantFields = {
        ...current,
        ...Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)),
        metadata: { ...current.metadata, ...metadata },
      };
      const version = current.lastVersion + 1;
      const values = [tenant, assistantId, version, next.graphId, next.name, ...this.sealed(tenant, assistantId, version, next), json(next.metadata)];
      await this.q('insert_assistant_version', values, client);
      await this.q('set_assistant_version', [tenant, assistantId, version], client);
      return this.toAssistant(tenant, (await this.q('get_assistant', [tenant, assistantId], client)).rows[0] as Json);
    });
  }

  /** Makes `version` current; undefined when the assistant or that version of it does not exist. */
  async setLatest(tenant: string, assistantId: string, version: number): Promise<StoredAssistant | undefined> {
    if ((await this.q('set_assistant_version', [tenant, assistantId, version])).rowCount === 0) return undefined;
    return this.get(tenant, assistantId);
  }

  /** The versions of a tenant's assistant, newest first (empty when it has none of that id). */
  async versions(tenant: string, assistantId: string, q: { metadata?: Json; limit?: number; offset?: number } = {}): Promise<AssistantVersion[]> {
    const values = [tenant, assistantId, q.metadata ? json(q.metadata) : null, q.limit ?? 10, q.offset ?? 0];
    return (await this.q('list_assistant_versions', values)).rows.map((r) => ({
      ...this.opened(tenant, r),
      assistantId: r.assistant_id as string,
      version: Number(r.version),
      createdAt: r.created_at as Date,
    }));
  }

  /** Deletes a tenant's assistant and its versions; false when it has none of that id. */
  async delete(tenant: string, assistantId: string): Promise<boolean> {
    return ((await this.q('delete_assistant', [tenant, assistantId])).rowCount ?? 0) === 1;
  }

  /** A tenant's assistants, stored and `builtIns`, matching `s` (default: newest first, 10), and how many match in all. */
  async search(tenant: string, builtIns: readonly BuiltInAssistant[], s: AssistantSearch = {}): Promise<{ assistants: StoredAssistant[]; total: number }> {
    const offset = s.offset ?? 0;
    const values = [...this.filterValues(tenant, builtIns, s), s.sortBy ?? 'created_at', s.sortOrder ?? 'desc', s.limit ?? 10, offset];
    const rows = (await this.q('search_assistants', values)).rows;
    const total = rows.length ? Number(rows[0]?.total) : offset > 0 ? await this.count(tenant, builtIns, s) : 0;
    return { assistants: rows.map((r) => this.toAssistant(tenant, r)), total };
  }

  /** How many of a tenant's assistants, stored and `builtIns`, match `f`. */
  async count(tenant: string, builtIns: readonly BuiltInAssistant[], f: AssistantFilter = {}): Promise<number> {
    return Number((await this.q('count_assistants', this.filterValues(tenant, builtIns, f))).rows[0]?.n ?? 0);
  }

  private filterValues(tenant: string, builtIns: readonly BuiltInAssistant[], f: AssistantFilter): unknown[] {
    const rows = builtIns.map((b) => ({
      assistant_id: b.assistantId,
      graph_id: b.graphId,
      name: b.name,
      description: b.description,
      metadata: b.metadata,
      created_at: b.createdAt.toISOString(),
    }));
    return [tenant, json(rows), f.graphId ?? null, f.name ?? null, f.metadata ? json(f.metadata) : null];
  }
}
