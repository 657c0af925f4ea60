import { type ChannelVersions, WRITES_IDX_MAP } from '@langchain/langgraph-checkpoint';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import type pg from 'pg';
import { checkpointContext, innerType, isSealedType, SealingSerializer } from './checkpoint-serde';
import type { PayloadCodec } from './crypto';

type Bytes = Uint8Array;
const text = (b: Bytes | undefined): string => new TextDecoder().decode(b);

// The parent's read query aggregates each blob as [channel, type, blob] and each write as
// [task_id, channel, type, blob]; the row's own key is appended (the parent's loaders read only
// the first elements) so a sealed value is opened with the row it is read from.
const BLOB_ROW = 'array[bl.channel::bytea, bl.type::bytea, bl.blob]';
const BLOB_ROW_KEYED = 'array[bl.channel::bytea, bl.type::bytea, bl.blob, bl.thread_id::bytea, bl.checkpoint_ns::bytea, bl.version::bytea]';
const WRITE_ROW = 'array[cw.task_id::text::bytea, cw.channel::bytea, cw.type::bytea, cw.blob]';
const WRITE_KEY = 'cw.thread_id::bytea, cw.checkpoint_ns::bytea, cw.checkpoint_id::bytea, cw.idx::text::bytea';
const WRITE_ROW_KEYED = `array[cw.task_id::text::bytea, cw.channel::bytea, cw.type::bytea, cw.blob, ${WRITE_KEY}]`;
const SEND_ROW = 'array[cw.type::bytea, cw.blob]';
const SEND_ROW_KEYED = `array[cw.type::bytea, cw.blob, cw.task_id::text::bytea, ${WRITE_KEY}]`;

/**
 * PostgresSaver whose sealed channel values and pending writes are bound to their rows: with a
 * codec, each is sealed with its row's key as associated data (checkpointContext) and opened
 * with the key of the row it was read from, so a value copied to another thread, namespace,
 * checkpoint, channel or version fails to open. Without a codec it is LangGraph's saver.
 */
export class RowBoundPostgresSaver extends PostgresSaver {
  constructor(pool: pg.Pool, codec: PayloadCodec | undefined, schema: string) {
    super(pool, codec && new SealingSerializer(codec), { schema });
    // biome-ignore lint/complexity/useLiteralKeys: the parent's private statements, extended once here
    const statements = this['SQL_STATEMENTS'] as { SELECT_SQL: string; SELECT_PENDING_SENDS_SQL: string };
    const { SELECT_SQL: read, SELECT_PENDING_SENDS_SQL: sends } = statements;
    if (!read.includes(BLOB_ROW) || !read.includes(WRITE_ROW) || !sends.includes(SEND_ROW)) {
      throw new Error('@langchain/langgraph-checkpoint-postgres changed its read queries: update row-bound-saver.ts to bind sealed values to their rows.');
    }
    statements.SELECT_SQL = read.replace(BLOB_ROW, BLOB_ROW_KEYED).replace(WRITE_ROW, WRITE_ROW_KEYED);
    statements.SELECT_PENDING_SENDS_SQL = sends.replace(SEND_ROW, SEND_ROW_KEYED);
  }

  /**
   * A channel version no other branch of the thread uses. LangGraph's integer versions (1, 2, 3 …)
   * repeat on two branches forked from one checkpoint, and blobs are keyed by version and inserted
   * ON CONFLICT DO NOTHING: the second branch's value would be dropped and the fork would read its
   * sibling's (langgraphjs issue 1812). A random fraction keeps a version a number, ordered after
   * every earlier one, so threads written with integer versions carry on.
   */
  override getNextVersion(current: ChannelVersions[string] | undefined): number {
    return Math.floor(Number(current ?? 0)) + 1 + Math.random() * 0.999;
  }

  private get sealing(): SealingSerializer | undefined {
    return this.serde instanceof SealingSerializer ? this.serde : undefined;
  }

  protected override async _dumpBlobs(threadId: string, ns: string, values: Record<string, unknown>, versions: ChannelVersions) {
    const sealing = this.sealing;
    if (!sealing) return super._dumpBlobs(threadId, ns, values, versions);
    return Promise.all(
      Object.entries(versions).map(async ([channel, ver]) => {
        const version = ver.toString();
        const [type, blob] =
          channel in values ? await sealing.dumpsBound(values[channel], checkpointContext.blob(threadId, ns, channel, version)) : ['empty', undefined];
        return [threadId, ns, channel, version, type, blob] as [string, string, string, string, string, Bytes | undefined];
      }),
    );
  }

  protected override async _dumpWrites(threadId: string, ns: string, checkpointId: string, taskId: string, writes: [string, unknown][]) {
    const sealing = this.sealing;
    if (!sealing) return super._dumpWrites(threadId, ns, checkpointId, taskId, writes);
    return Promise.all(
      writes.map(async ([channel, value], i) => {
        const idx = WRITES_IDX_MAP[channel] ?? i;
        const [type, blob] = await sealing.dumpsBound(value, checkpointContext.write(threadId, ns, checkpointId, taskId, idx));
        return [threadId, ns, checkpointId, taskId, idx, channel, type, blob] as [string, string, string, string, number, string, string, Bytes];
      }),
    );
  }

  protected override async _loadBlobs(blobValues: Bytes[][]): Promise<Record<string, unknown>> {
    const sealing = this.sealing;
    if (!sealing) return super._loadBlobs(blobValues as [Bytes, Bytes, Bytes][]);
    const entries = (blobValues ?? [])
      .filter(([, type]) => text(type) !== 'empty')
      .map(async ([channel, type, blob, thread, ns, version]) => {
        // Rows without their key come only from LangGraph's pre-v4 pending-sends migration (unbound format).
        if (thread === undefined) return [text(channel), await sealing.loadsTyped(text(type), blob as Bytes)];
        const context = checkpointContext.blob(text(thread), text(ns), text(channel), text(version));
        return [text(channel), await sealing.loadsBound(text(type), blob as Bytes, context)];
      });
    return Object.fromEntries(await Promise.all(entries));
  }

  protected override async _loadWrites(writes: Bytes[][]): Promise<[string, string, unknown][]> {
    const sealing = this.sealing;
    if (!sealing) return super._loadWrites(writes as [Bytes, Bytes, Bytes, Bytes][]);
    return Promise.all(
      (writes ?? []).map(async ([task, channel, type, blob, thread, ns, checkpoint, idx]) => {
        const context = checkpointContext.write(text(thread), text(ns), text(checkpoint), text(task), Number(text(idx)));
        return [text(task), text(channel), await sealing.loadsBound(text(type), blob as Bytes, context)] as [string, string, unknown];
      }),
    );
  }

  /** LangGraph's migration of pre-v4 checkpoints' pending sends: each send opened with its own row's key first. */
  override async _migratePendingSends(pendingSends: Bytes[][], row: Parameters<PostgresSaver['_migratePendingSends']>[1]): Promise<void> {
    const sealing = this.sealing;
    const opened = pendingSends.map(([type, blob, task, thread, ns, checkpoint, idx]): [Bytes, Bytes] => {
      const t = text(type);
      if (!sealing || !isSealedType(t) || thread === undefined) return [type as Bytes, blob as Bytes];
      const context = checkpointContext.write(text(thread), text(ns), text(checkpoint), text(task), Number(text(idx)));
      return [new TextEncoder().encode(innerType(t)), sealing.openBytes(t, blob as Bytes, context)];
    });
    return super._migratePendingSends(opened, row);
  }
}
