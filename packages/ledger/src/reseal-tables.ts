import { checkpointContext, innerType, isSealedType, isUnboundSealedType, rowBoundType, UNBOUND_CONTEXT } from './checkpoint-seal';
import { type AesGcmPayloadCodec, isSealedEnvelope, sealContext } from './crypto';

type Row = Record<string, unknown>;
const s = (v: unknown) => String(v);

/** A sealed column of a jsonb table: sealed as a whole, or an object whose top-level fields are sealed one by one. */
interface JsonColumn {
  name: string;
  fields?: boolean;
  context: (row: Row, field: string) => string;
}

/** A table the re-seal walks: its SQL (reseal_page_<table>.sql, reseal_<table>.sql), the key of a row, and how its values are sealed. */
export interface ResealTable {
  table: string;
  key: (row: Row) => unknown[];
  /** The ids of the keys (or `unbound`, for the older checkpoint format) that sealed the row's values not sealed with `kid`. */
  stale: (row: Row, kid: string) => string[];
  /** The row's stale values re-sealed with the codec's current key: the parameters of one row of reseal_<table>.sql. Throws when one cannot be opened. */
  reseal: (row: Row, codec: AesGcmPayloadCodec) => Row;
}

const staleKid = (v: unknown, kid: string): string | undefined => (isSealedEnvelope(v) && v.kid !== kid ? v.kid : undefined);

/** Envelopes of one column value: the value itself, or each top-level field of it. */
function envelopes(col: JsonColumn, value: unknown): Array<[string, unknown]> {
  if (!col.fields) return [['', value]];
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? Object.entries(value) : [];
}

function jsonTable(table: string, keyColumns: string[], columns: JsonColumn[]): ResealTable {
  const key = (row: Row) => keyColumns.map((k) => row[k]);
  const stale = (row: Row, kid: string) => columns.flatMap((col) => envelopes(col, row[col.name]).flatMap(([, v]) => staleKid(v, kid) ?? []));
  return {
    table,
    key,
    stale,
    reseal(row, codec) {
      const old: Row = {};
      const next: Row = {};
      for (const col of columns) {
        const value = row[col.name];
        const again = (field: string, v: unknown) => {
          if (staleKid(v, codec.currentKeyId) === undefined) return v;
          const context = col.context(row, field);
          return codec.seal(codec.open(v, context), context);
        };
        if (!envelopes(col, value).some(([, v]) => staleKid(v, codec.currentKeyId))) continue;
        old[col.name] = value;
        next[col.name] = col.fields ? Object.fromEntries(Object.entries(value as Row).map(([f, v]) => [f, again(f, v)])) : again('', value);
      }
      return { key: key(row), old, new: next };
    },
  };
}

function checkpointTable(table: string, keyColumns: string[], context: (row: Row) => string): ResealTable {
  const key = (row: Row) => keyColumns.map((k) => row[k]);
  const envelope = (row: Row): unknown => JSON.parse(Buffer.from(s(row.blob), 'base64').toString('utf8'));
  const stale = (row: Row, kid: string): string[] => {
    const type = s(row.type);
    if (!isSealedType(type) || row.blob === null) return [];
    if (isUnboundSealedType(type)) return ['unbound'];
    return [staleKid(envelope(row), kid) ?? []].flat();
  };
  return {
    table,
    key,
    stale,
    reseal(row, codec) {
      const type = s(row.type);
      const plain = codec.open(envelope(row), isUnboundSealedType(type) ? UNBOUND_CONTEXT : context(row));
      const sealed = JSON.stringify(codec.seal(plain, context(row)));
      return { key: key(row), old_type: type, old_blob: row.blob, new_type: rowBoundType(innerType(type)), new_blob: Buffer.from(sealed).toString('base64') };
    },
  };
}

const job = (r: Row) => s(r.job_id);

/** Every table with sealed values, in the order the re-seal walks them. */
export const RESEAL_TABLES: readonly ResealTable[] = [
  jsonTable(
    'jobs',
    ['job_id'],
    [
      { name: 'input', context: (r) => sealContext.jobInput(job(r)) },
      { name: 'result', context: (r) => sealContext.jobResult(job(r)) },
      { name: 'interrupt', context: (r) => sealContext.jobInterrupt(job(r)) },
      { name: 'resume_value', context: (r) => sealContext.jobResumeValue(job(r)) },
      { name: 'metadata', context: (r) => sealContext.jobMetadata(job(r)) },
      { name: 'idempotency_key_sealed', context: (r) => sealContext.jobIdempotencyKey(job(r)) },
      { name: 'webhook', context: (r) => sealContext.jobWebhook(job(r)) },
      { name: 'error', fields: true, context: (r, f) => sealContext.jobError(job(r), f) },
    ],
  ),
  jsonTable(
    'effects',
    ['job_id', 'effect_key'],
    [
      { name: 'result', context: (r) => sealContext.effectResult(job(r), s(r.effect_key)) },
      { name: 'error', fields: true, context: (r, f) => sealContext.effectError(job(r), f) },
    ],
  ),
  jsonTable('job_events', ['job_id', 'event_id'], [{ name: 'detail', fields: true, context: (r, f) => sealContext.eventDetail(job(r), f) }]),
  jsonTable('run_stream_events', ['job_id', 'event_id'], [{ name: 'data', context: (r) => sealContext.streamData(job(r)) }]),
  jsonTable(
    'assistant_versions',
    ['tenant', 'assistant_id', 'version'],
    ['description', 'config', 'context'].map((name) => ({
      name,
      context: (r: Row) => sealContext.assistantVersion(s(r.tenant), s(r.assistant_id), Number(r.version), name),
    })),
  ),
  jsonTable(
    'crons',
    ['cron_id'],
    [
      { name: 'input', context: (r) => sealContext.cronInput(s(r.cron_id)) },
      { name: 'metadata', context: (r) => sealContext.cronMetadata(s(r.cron_id)) },
    ],
  ),
  checkpointTable('checkpoint_blobs', ['thread_id', 'checkpoint_ns', 'channel', 'version'], (r) =>
    checkpointContext.blob(s(r.thread_id), s(r.checkpoint_ns), s(r.channel), s(r.version)),
  ),
  checkpointTable('checkpoint_writes', ['thread_id', 'checkpoint_ns', 'checkpoint_id', 'task_id', 'idx'], (r) =>
    checkpointContext.write(s(r.thread_id), s(r.checkpoint_ns), s(r.checkpoint_id), s(r.task_id), Number(r.idx)),
  ),
];
