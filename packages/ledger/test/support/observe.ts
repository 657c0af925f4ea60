// Watching what a pool sends, without changing it: the saver tests count round trips.
import type pg from 'pg';

/** The queries `pool.query` runs while `work` runs: a named statement's name, or the query's text. */
export async function queriesDuring(pool: pg.Pool, work: () => Promise<unknown>): Promise<string[]> {
  const query = pool.query;
  const sent: string[] = [];
  pool.query = ((...args: Parameters<typeof query>) => {
    const q = args[0] as string | { name?: string; text?: string };
    sent.push(typeof q === 'string' ? q : (q.name ?? q.text ?? ''));
    return (query as (...a: unknown[]) => unknown).apply(pool, args);
  }) as typeof query;
  try {
    await work();
  } finally {
    pool.query = query;
  }
  return sent;
}
