-- store_search.sql
-- A tenant's items under a namespace prefix whose value contains `filter` (jsonb @>), newest
-- update first (LedgerStore.search).
-- Params: $1 tenant, $2 namespace prefix text[] (empty: every namespace), $3 filter jsonb (null:
--   none), $4 limit, $5 offset
-- Returns: the items' rows.
SELECT namespace, key, value, created_at, updated_at
  FROM store_items
 WHERE tenant = $1
   AND namespace[1:cardinality($2::text[])] = $2::text[]
   AND ($3::jsonb IS NULL OR value @> $3::jsonb)
 ORDER BY updated_at DESC, namespace, key
 LIMIT $4 OFFSET $5;
