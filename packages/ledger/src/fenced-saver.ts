import type { RunnableConfig } from '@langchain/core/runnables';
import type { Checkpoint, CheckpointMetadata, PendingWrite } from '@langchain/langgraph-checkpoint';
import { SealingSerializer } from './checkpoint-serde';
import { fenced } from './errors';
import type { Ledger } from './ledger';
import { JOB_TAG, type SaverOptions, ThreadSaver } from './thread-saver';

export interface Fence {
  jobId: string;
  fencingToken: number;
}

/** FencedPostgresSaver's options: the saver's, and who hears of each checkpoint it saved. */
export interface FencedSaverRunOptions extends SaverOptions {
  /** Called after each checkpoint this saver wrote under its fence (the delivery's Bull Board steps). */
  onCheckpoint?: () => void;
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
export class FencedPostgresSaver extends ThreadSaver {
  /** Checkpoint or write calls this saver refused because the lease was lost. */
  rejectedWrites = 0;

  /** The thread known empty (SaverOptions.emptyThread), until this saver's first write. */
  private emptyThread: string | undefined;
  private readonly onCheckpoint: (() => void) | undefined;

  constructor(
    ledger: Pick<Ledger, 'pool' | 'payloadCodec'>,
    private readonly fence: Fence,
    options: FencedSaverRunOptions = {},
  ) {
    super(ledger.pool, { ...options, codec: options.codec ?? ledger.payloadCodec });
    this.emptyThread = options.emptyThread;
    this.onCheckpoint = options.onCheckpoint;
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
    const saved = super.put(config, checkpoint, { ...run, ...metadata, [JOB_TAG]: this.fence.jobId } as CheckpointMetadata, newVersions);
    if (!this.onCheckpoint) return saved;
    const heard = this.onCheckpoint;
    return saved.then((c) => {
      heard();
      return c;
    });
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

  override async *list(...args: Parameters<ThreadSaver['list']>) {
    if (this.held.length > 0) await this.flushHeld();
    yield* super.list(...args);
  }

  private refuse(what: string, alsoRefused = 0): never {
    this.rejectedWrites += 1 + alsoRefused;
    return fenced<never>(false, this.fence.jobId, this.fence.fencingToken, what);
  }
}
