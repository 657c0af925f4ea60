// The store's semantic search (langgraph.json `store.index`): what a query costs as the store grows.
// Loads 10k, then 100k items into one tenant's store through LedgerStore's put (each embedded by a
// deterministic local function: words hashed into DIMS buckets, no network model; one field, 3–8
// words of a 1,000-word vocabulary), 16 puts in flight; then times a query search (limit 10) at each
// size, the median of QUERIES (3) different queries:
// - `sql`: the product path, store_search.sql: exact cosine (a dot product of unit vectors) over
//   every item's real[] vector in PostgreSQL, sorted there;
// - `producer`: the alternative, every vector of the prefix read into Node and scored there (a
//   bench-only SELECT: the vectors' transfer and parse is the cost being measured).
// pgvector is used by neither (not installed on the bench machine; see docs/decisions/0012-store-index.md).
import type pg from 'pg';
import { LedgerStore } from '../packages/ledger/src/index';
import { benchSchema } from './bench-schema';
import { type BenchOptions, type Figure, size, summarize } from './figures';

const DIMS = 256;
const QUERIES = 3;
const VOCABULARY = Array.from({ length: 1_000 }, (_, i) => `w${i.toString(36)}x`);

function bucket(word: string): number {
  let h = 0x811c9dc5;
  for (const ch of word) h = Math.imul(h ^ (ch.codePointAt(0) ?? 0), 0x01000193) >>> 0;
  return h % DIMS;
}

async function embed(texts: string[]): Promise<number[][]> {
  return texts.map((text) => {
    const v = new Array<number>(DIMS).fill(0);
    for (const w of text.split(' ')) v[bucket(w)] = (v[bucket(w)] ?? 0) + 1;
    return v;
  });
}

/** A deterministic pseudo-random sentence for item `n`. */
function sentence(n: number): string {
  let x = (n * 2654435761) >>> 0;
  const words: string[] = [];
  for (let i = 0; i < 3 + (n % 6); i++) {
    x = Math.imul(x ^ (x >>> 15), 0x2c1b3c6d) >>> 0;
    words.push(VOCABULARY[x % VOCABULARY.length] as string);
  }
  return words.join(' ');
}

async function load(store: LedgerStore, from: number, to: number): Promise<number> {
  let next = from;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < to) {
        const n = next++;
        await store.putItem({ namespace: ['bench', `u${n % 100}`], key: `k${n}`, value: { text: sentence(n), n } });
      }
    }),
  );
  return (to - from) / ((performance.now() - t0) / 1000);
}

/** The producer-side alternative: every vector under the prefix read and scored in Node. */
async function producerSearch(pool: pg.Pool, query: number[], limit: number): Promise<string[]> {
  const rows = (await pool.query<{ key: string; embedding: number[] }>("SELECT key, embedding FROM store_vectors WHERE tenant = 'bench'")).rows;
  const scored = rows.map((r) => {
    let dot = 0;
    for (let i = 0; i < DIMS; i++) dot += (r.embedding[i] ?? 0) * (query[i] ?? 0);
    return [dot, r.key] as const;
  });
  scored.sort((a, b) => b[0] - a[0]);
  return scored.slice(0, limit).map(([, k]) => k);
}

async function timed(call: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await call();
  return performance.now() - t0;
}

export async function run(opts: BenchOptions): Promise<Figure[]> {
  const sizes = size(opts, { smoke: [200, 1_000], quick: [10_000, 100_000], full: [10_000, 100_000] });
  const db = await benchSchema(opts, 'store_search', 24);
  const store = new LedgerStore(db.pool, { tenant: 'bench', index: { dims: DIMS, fields: ['text'], embed } });
  const figures: Figure[] = [];
  try {
    let loaded = 0;
    for (const n of sizes) {
      const rate = await load(store, loaded, n);
      loaded = n;
      figures.push(summarize(`store put, indexed (${DIMS} dims), 16 in flight, up to ${n} items`, 'items/s', [rate]));
      await db.pool.query('VACUUM ANALYZE store_items, store_vectors');
      const queries = Array.from({ length: QUERIES }, (_, i) => sentence(1_000_003 + i));
      // One warm-up of each path, then the timed queries.
      await store.searchItems({ namespacePrefix: ['bench'], query: queries[0], limit: 10 });
      const sql: number[] = [];
      const producer: number[] = [];
      for (const q of queries) {
        sql.push(await timed(() => store.searchItems({ namespacePrefix: ['bench'], query: q, limit: 10 })));
        const [v] = await embed([q]);
        const norm = Math.hypot(...(v as number[]));
        producer.push(
          await timed(() =>
            producerSearch(
              db.pool,
              (v as number[]).map((x) => x / norm),
              10,
            ),
          ),
        );
      }
      figures.push(summarize(`query search, exact cosine in SQL, ${n} items`, 'ms', sql));
      figures.push(summarize(`query search, vectors scored in the producer, ${n} items`, 'ms', producer));
    }
  } finally {
    await db.drop();
  }
  return figures;
}
