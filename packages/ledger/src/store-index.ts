import { getTextAtPath } from '@langchain/langgraph-checkpoint';
import { LedgerError } from './errors';

/** langgraph.json `store.index`, resolved: the embedding function and the fields it reads. */
export interface StoreIndex {
  /** Length of every vector `embed` returns. */
  dims: number;
  /** JSON paths of a value to embed (`$`: the whole value), as LangGraph's stores take them. Default `["$"]`. */
  fields?: string[];
  /** Texts to vectors, one per text, in order. */
  embed(texts: string[]): Promise<number[][]>;
}

/** langgraph.json `store.ttl`, in minutes as LangGraph's config has it. */
export interface StoreTtl {
  /** A put without its own `ttl` expires after this many minutes (absent: never). */
  defaultMinutes?: number;
  /** Reads (get, search) that do not say otherwise move an item's expiry to its ttl from now. */
  refreshOnRead: boolean;
}

/** The texts of `value` at each field path, keyed as LangGraph names them (`path`, or `path.i` for each of several). */
export function indexedTexts(value: Record<string, unknown>, fields: string[]): Array<[field: string, text: string]> {
  const out: Array<[string, string]> = [];
  for (const path of fields) {
    const texts = getTextAtPath(value, path);
    if (texts.length === 1) out.push([path, texts[0] as string]);
    else
      texts.forEach((text, i) => {
        out.push([`${path}.${i}`, text]);
      });
  }
  return out;
}

/** Runs the embedding function and checks what it returns; each vector scaled to unit length, as a real[] literal. */
export async function embedTexts(index: StoreIndex, texts: string[]): Promise<string[]> {
  if (texts.length === 0) return [];
  const vectors = await index.embed(texts);
  if (!Array.isArray(vectors) || vectors.length !== texts.length)
    throw new LedgerError('INVALID_REQUEST', `store.index.embed returned ${Array.isArray(vectors) ? vectors.length : 'no'} vectors for ${texts.length} texts.`);
  return vectors.map((v) => {
    if (!Array.isArray(v) || v.length !== index.dims || !v.every(Number.isFinite))
      throw new LedgerError('INVALID_REQUEST', `store.index.embed must return vectors of ${index.dims} finite numbers (store.index.dims).`);
    const norm = Math.hypot(...v);
    return `{${(norm > 0 ? v.map((x) => x / norm) : v).join(',')}}`;
  });
}
