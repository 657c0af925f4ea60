import type { RunnableConfig } from '@langchain/core/runnables';
import { type Checkpoint, type CheckpointMetadata, type PendingWrite, WRITES_IDX_MAP } from '@langchain/langgraph-checkpoint';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import type pg from 'pg';
import { SealingSerializer } from './checkpoint-serde';
import type { PayloadCodec } from './crypto';
import { wrapDbError } from './db';
import { LeaseLostError } from './errors';
import type { Ledger } from './ledger';
import { RowBoundPostgresSaver } from './row-bound-saver';
import { sql } from './sql';

export interface Fence {
  jobId: string;
  fencingToken: number;
}

export interface FencedSaverOptions {
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
const JOB_TAG = 'runledger_job';

/** A serialized value as node-pg sends it inside a bytea[] parameter; null stays SQL NULL. */
const bytes = (v: Uint8Array | undefined): Buffer | null => (v === undefined ? null : Buffer.from(v.buffer, v.byteOffset, v.byteLength));

/**
 * PostgresSaver whose `put` and `putWrites` are each one statement: one round trip, its own
 * transaction, every blob or write of the call in one INSERT … SELECT FROM unnest(…). Same rows
 * and conflict rules as the parent's one-row-per-statement transactions; the parent's
 * serializers, reads and `deleteThread`. Unfenced: the worker uses FencedPostgresSaver; this
 * class is its write path without the fence, which bench/saver.ts times on its own.
 */
export class OneStatementPostgresSaver extends RowBoundPostgresSaver {
  constructor(
    protected readonly writePool: pg.Pool,
    options: FencedSaverOptions = {},
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
    try {
      return (await this.writePool.query({ name: `runledger_${name}`, text: sql(name), values })).rows[0];
    } catch (err) {
      throw wrapDbError(err);
    }
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

interface HeldWrites {
  /** put_writes.sql's parameters after the fence: thread, ns, checkpoint, task, idx[], channel[], type[], blob[], replace. */
  data: unknown[];
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** Held writes as put_checkpoint_running.sql's row arrays ($13–$20): one element per written row. */
function heldRows(held: HeldWrites[]): unknown[][] {
  const columns: unknown[][] = [[], [], [], [], [], [], [], []];
  for (const { data } of held) {
    const idx = data[4] as number[];
    for (let i = 0; i < idx.length; i++) {
      const row = [data[0], data[1], data[2], data[3], idx[i], (data[5] as unknown[])[i], (data[6] as unknown[])[i], (data[7] as unknown[])[i]];
      for (const [c, v] of row.entries()) columns[c]?.push(v);
    }
  }
  return columns;
}

/**
 * The checkpointer of one attempt of one job. Each `put` and `putWrites` is one statement
 * (`put_checkpoint.sql`, `put_writes.sql`) that share-locks the job
 * row while this fencing token holds the lease and writes only if it does; otherwise nothing
 * is written and it throws `LeaseLostError`. The attempt's first checkpoint moves the job
 * starting → running (with its `checkpointed` event) in that same statement; later ones use
 * `put_checkpoint_running.sql`, the same fence without the move.
 *
 * Once running (or while the first put is in flight), a task's plain writes (not errors,
 * interrupts or resume values) are held until the next `put` or the next turn of the event loop
 * (after the first put settles), whichever comes first: a put that follows
 * at once carries them in its own statement (`put_checkpoint_running.sql`), so a step of one
 * task commits once instead of twice. Each `putWrites` promise settles when its rows are written
 * (or refused), so LangGraph's `durability: 'sync'` still waits for them; reads write them first.
 */
export class FencedPostgresSaver extends OneStatementPostgresSaver {
  /** Checkpoint or write calls this saver refused because the lease was lost. */
  rejectedWrites = 0;

  /** The thread known empty (FencedSaverOptions.emptyThread), until this saver's first write. */
  private emptyThread: string | undefined;

  constructor(
    ledger: Ledger,
    private readonly fence: Fence,
    options: FencedSaverOptions = {},
  ) {
    super(ledger.pool, { ...options, codec: options.codec ?? ledger.payloadCodec });
    this.emptyThread = options.emptyThread;
  }

  /**
   * Tags each checkpoint with the job that wrote it (metadata JOB_TAG, unseen by readers), so a
   * rollback finds them. As LangGraph's server, the run's `config.metadata` (a LangGraph API run's
   * metadata) goes into the checkpoint's metadata under LangGraph's own keys, so the history can be
   * filtered by it; not with sealed values, as checkpoint metadata is stored plain.
   */
  override put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: Record<string, string | number>,
  ): Promise<RunnableConfig> {
    this.emptyThread = undefined;
    const run = this.serde instanceof SealingSerializer ? {} : (config.metadata ?? {});
    return super.put(config, checkpoint, { ...run, ...metadata, [JOB_TAG]: this.fence.jobId } as CheckpointMetadata, newVersions);
  }

  /** A put of this saver held its fence: the job is running under this token (or the lease is lost). */
  private seenRunning = false;

  protected override async writeCheckpoint(data: unknown[]): Promise<void> {
    const values = [this.fence.jobId, this.fence.fencingToken, ...data];
    // Once running, the same fence without the starting → running move (and the counting
    // trigger its UPDATE fires), with the held writes: put_checkpoint_running.sql.
    if (this.seenRunning) return this.putRunning(values);
    this.firstPuts++;
    try {
      let out = await this.statement('put_checkpoint', values);
      // The snapshot saw this attempt's job still starting, but a concurrent put of the same
      // attempt moved it first: not `starting` any more for `moved`, not yet `running` for `held`.
      // A fresh snapshot tells (one more round trip, never on the common path).
      if (!out.held && out.raced) out = await this.statement('put_checkpoint', values);
      if (!out.held) this.refuse('checkpoint write');
      this.seenRunning = true;
    } finally {
      // Writes held meanwhile wait for the next put (LangGraph chains it right after this one), at most a turn.
      if (--this.firstPuts === 0 && this.held.length > 0) this.flushNextTurn();
    }
  }

  /** First puts (starting → running) in flight: writes made meanwhile are held for the put after them. */
  private firstPuts = 0;

  /** Plain task writes waiting for the next put (put_writes.sql's parameters), with their callers' promises. */
  private held: HeldWrites[] = [];
  private flushTurn: NodeJS.Immediate | undefined;

  protected override writeWrites(data: unknown[]): Promise<void> {
    // Special writes (`replace`), and writes before any put of the attempt, go at once.
    if (data[8] === true || !(this.seenRunning || this.firstPuts > 0)) return this.writeWritesNow(data);
    return new Promise((resolve, reject) => {
      this.held.push({ data, resolve, reject });
      if (this.firstPuts === 0) this.flushNextTurn();
    });
  }

  private flushNextTurn(): void {
    this.flushTurn ??= setImmediate(() => void this.flushHeld());
  }

  private async writeWritesNow(data: unknown[]): Promise<void> {
    const out = await this.statement('put_writes', [this.fence.jobId, this.fence.fencingToken, ...data]);
    if (!out.held) this.refuse('pending write');
  }

  /** Writes what is held, each task's writes on their own: no put came in time to carry them. */
  private async flushHeld(): Promise<void> {
    clearImmediate(this.flushTurn);
    this.flushTurn = undefined;
    const held = this.held.splice(0);
    await Promise.all(held.map((h) => this.writeWritesNow(h.data).then(h.resolve, h.reject)));
  }

  /** A running put, carrying the held writes (none: empty arrays). */
  private async putRunning(values: unknown[]): Promise<void> {
    const held = this.held.splice(0);
    try {
      if (!(await this.statement('put_checkpoint_running', [...values, ...heldRows(held)])).held) this.refuse('checkpoint write', held.length);
    } catch (err) {
      for (const h of held) h.reject(err);
      throw err;
    }
    for (const h of held) h.resolve();
  }

  override async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string): Promise<void> {
    this.emptyThread = undefined;
    return super.putWrites(config, writes, taskId);
  }

  override async getTuple(config: RunnableConfig) {
    if (this.emptyThread !== undefined && config.configurable?.thread_id === this.emptyThread) return undefined;
    if (this.held.length > 0) await this.flushHeld();
    return super.getTuple(config);
  }

  override async *list(...args: Parameters<OneStatementPostgresSaver['list']>) {
    if (this.held.length > 0) await this.flushHeld();
    yield* super.list(...args);
  }

  private refuse(what: string, alsoRefused = 0): never {
    this.rejectedWrites += 1 + alsoRefused;
    throw new LeaseLostError(this.fence.jobId, this.fence.fencingToken, what);
  }
}
