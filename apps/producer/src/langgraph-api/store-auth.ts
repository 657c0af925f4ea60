import { type AuthFilters, matchesFilters } from './auth-filters';

/** How many items (or namespaces) a filtered search reads at most, as LangGraph's server bounds it. */
const SCAN_LIMIT = 1_000;
const PAGE = 100;

/** Whether a store item matches a custom-auth filter: its value's fields plus `namespace` and `key`, as LangGraph's server judges it. */
export function storeMatches(filters: AuthFilters | undefined, namespace: string[], key?: string, value?: Record<string, unknown> | null): boolean {
  return matchesFilters({ ...(value ?? {}), namespace, ...(key === undefined ? {} : { key }) }, filters);
}

/**
 * The page `offset`/`limit` of what `keep` lets through, reading `page` in order (at most
 * SCAN_LIMIT entries, so a filter that matches little answers a short page, never scans forever).
 */
export async function filteredPage<T>(
  page: (offset: number, limit: number) => Promise<T[]>,
  keep: (t: T) => boolean,
  offset: number,
  limit: number,
): Promise<T[]> {
  const kept: T[] = [];
  for (let scanned = 0; kept.length < offset + limit && scanned < SCAN_LIMIT; ) {
    const batch = await page(scanned, PAGE);
    scanned += batch.length;
    kept.push(...batch.filter(keep));
    if (batch.length < PAGE) break;
  }
  return kept.slice(offset, offset + limit);
}
