import type { RunnableConfig } from '@langchain/core/runnables';
import { type Checkpoint, type CheckpointMetadata, type PendingWrite, WRITES_IDX_MAP } from '@langchain/langgraph-checkpoint';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import type pg from 'pg';
import { SealingSerializer } from './checkpoint-serde';
import type { PayloadCodec } from './crypto';
import { RowBoundPostgresSaver } from './row-bound-saver';
import { run } from './sql';

export interface SaverOptions {
  /**
   * Schema of the checkpoint tables for the parent's reads and `deleteThread`. Default `public`.
   * Writes name their tables unqualified, like every ledger statement, and so go to the pool's
   * search_path (`createPool`: the ledger schema first), where `migrate()` creates the
   * checkpoint tables beside the ledger's: pass that same schema (DB_SCHEMA) here.
   */
  schema?: string;
  /**
   * Seal channel values and pending writes at rest with this codec (SealingSerializer);
   * FencedPostgresSaver takes the ledger's own when not given. Default none: stored as LangGraph
   * serializes them.
   */
  codec?: PayloadCodec;
  /**
   * A LangGraph thread id the caller knows has no checkpoint (the claim said so: the job holds
   * its thread, so nobody else writes there): FencedPostgresSaver answers its reads of that
   * thread with nothing until its own first write, without a query.
   */
  emptyThread?: string;
}

/** The checkpoint metadata key naming the job that wrote it (delete_run_checkpoints.sql reads it). */
export const JOB_TAG = 'runledger_job';

/** A serialized value as node-pg sends it inside a bytea[] parameter; null stays SQL NULL. */
const bytes = (v: Uint8Array | undefined): Buffer | null => (v === undefined ? null : Buffer.from(v.buffer, v.byteOffset, v.byteLength));

/**
 * The saver of a thread outside any run: the LangGraph API's and `/v1`'s state reads, state
 * updates and thread copies, and the write path FencedPostgresSaver adds its fence to. Its `put`
 * and `putWrites` are each one statement: one round trip, its own transaction, every blob or
 * write of the call in one INSERT … SELECT FROM unnest(…). Same rows and conflict rules as the
 * parent's one-row-per-statement transactions; the parent's serializers, reads and
 * `deleteThread`. Unfenced: no job holds what it writes (a state update runs with no run open on
 * the thread); a run's checkpoints always go through FencedPostgresSaver.
 */
export class ThreadSaver extends RowBoundPostgresSaver {
  constructor(
    protected readonly writePool: pg.Pool,
    options: SaverOptions = {},
  ) {
    super(writePool, options.codec, options.schema ?? 'public');
  }

  /**
   * Metadata stays readable when values are sealed (LangGraph reads its step; `list()` filters
   * on it): the parent's own serialization, with the plain serializer.
   */
  protected override _dumpMetadata(metadata: CheckpointMetadata): Promise<unknown> {
    const serde = this.serde instanceof SealingSerializer ? this.serde.plain : this.serde;
    // biome-ignore lint/complexity/useLiteralKeys: the parent's protected method, run with another serializer
    return PostgresSaver.prototype['_dumpMetadata'].call({ serde }, metadata);
  }

  /** Checkpoint metadata as LangGraph wrote it: without the tag FencedPostgresSaver adds for rollbacks. */
  protected override async _loadMetadata(metadata: Record<string, unknown>): Promise<CheckpointMetadata> {
    const { [JOB_TAG]: _job, ...rest } = metadata ?? {};
    return super._loadMetadata(rest);
  }

  /** Runs one of the saver's statements as a named (prepared) statement; returns its one row. */
  protected async statement(name: string, values: unknown[]): Promise<{ held: boolean; raced?: boolean }> {
    return (await run(this.writePool, name, values)).rows[0] as { held: boolean; raced?: boolean };
  }

  /** Writes one checkpoint; `data` is put_checkpoint_unfenced.sql's parameters. */
  protected async writeCheckpoint(data: unknown[]): Promise<void> {
    await this.statement('put_checkpoint_unfenced', data);
  }

  /** Writes one task's pending writes; `data` is put_writes_unfenced.sql's parameters. */
  protected async writeWrites(data: unknown[]): Promise<void> {
    await this.statement('put_writes_unfenced', data);
  }

  override async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: Record<string, string | number>,
  ): Promise<RunnableConfig> {
    if (config.configurable === undefined) throw new Error(`Missing "configurable" field in "config" param`);
    const { thread_id, checkpoint_ns = '', checkpoint_id } = config.configurable;
    const [blobs, serializedMetadata] = await Promise.all([
      this._dumpBlobs(thread_id, checkpoint_ns, checkpoint.channel_values, newVersions),
      this._dumpMetadata(metadata),
    ]);
    // Blob rows: [thread_id, checkpoint_ns, channel, version, type, blob (undefined for 'empty')].
    await this.writeCheckpoint([
      thread_id,
      checkpoint_ns,
      checkpoint.id,
      checkpoint_id,
      this._dumpCheckpoint(checkpoint),
      serializedMetadata,
      blobs.map((b) => b[2]),
      blobs.map((b) => b[3]),
      blobs.map((b) => b[4]),
      blobs.map((b) => bytes(b[5])),
    ]);
    return { configurable: { thread_id, checkpoint_ns, checkpoint_id: checkpoint.id } };
  }

  override async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string): Promise<void> {
    const upsert = writes.every((w) => w[0] in WRITES_IDX_MAP);
    const { thread_id, checkpoint_ns, checkpoint_id } = config.configurable ?? {};
    const dumped = await this._dumpWrites(thread_id, checkpoint_ns, checkpoint_id, taskId, writes);
    // Rows: [thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob]. One row
    // per idx (WRITES_IDX_MAP gives a special channel a fixed one), as the parent's one-by-one
    // statements leave it: its upsert keeps the last write of an idx, its insert the first.
    const byIdx = new Map<number, (typeof dumped)[number]>();
    for (const row of dumped) if (upsert || !byIdx.has(row[4])) byIdx.set(row[4], row);
    const rows = [...byIdx.values()];
    await this.writeWrites([
      thread_id,
      checkpoint_ns,
      checkpoint_id,
      taskId,
      rows.map((r) => r[4]),
      rows.map((r) => r[5]),
      rows.map((r) => r[6]),
      rows.map((r) => bytes(r[7])),
      upsert,
    ]);
  }
}
