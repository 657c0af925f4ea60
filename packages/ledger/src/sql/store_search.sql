-- store_search.sql
-- A tenant's unexpired items under a namespace prefix whose value contains `filter` (jsonb @>)
-- (LedgerStore.search). Without a query vector newest update first; with one, ranked by `score`,
-- the best cosine similarity of the item's vectors (unit length: a dot product), exact over
-- every matching item; items without vectors follow, unscored. With $7 the items returned that
-- have a ttl expire it from now again (refresh on read).
-- Params: $1 tenant, $2 namespace prefix text[] (empty: every namespace), $3 filter jsonb (null:
--   none), $4 limit, $5 offset, $6 query vector real[] (null: no query), $7 refresh boolean
-- Returns: the items' rows with `score` (null without a query or a vector).
WITH found AS (
  SELECT i.namespace, i.key, i.value, i.created_at, i.updated_at, i.ttl_minutes, s.score
    FROM store_items i
    LEFT JOIN LATERAL (
      SELECT max(d.dot) AS score
        FROM store_vectors v
       CROSS JOIN LATERAL (SELECT sum(a * b)::float8 AS dot FROM unnest(v.embedding, $6::real[]) AS t(a, b)) d
       WHERE v.tenant = i.tenant AND v.namespace = i.namespace AND v.key = i.key
    ) s ON $6::real[] IS NOT NULL
   WHERE i.tenant = $1
     AND i.namespace[1:cardinality($2::text[])] = $2::text[]
     AND ($3::jsonb IS NULL OR i.value @> $3::jsonb)
     AND (i.expires_at IS NULL OR i.expires_at > clock_timestamp())
   ORDER BY s.score DESC NULLS LAST, i.updated_at DESC, i.namespace, i.key
   LIMIT $4 OFFSET $5
), refreshed AS (
  UPDATE store_items i SET expires_at = clock_timestamp() + i.ttl_minutes * interval '1 minute'
    FROM found f
   WHERE $7::boolean AND f.ttl_minutes IS NOT NULL AND i.tenant = $1 AND i.namespace = f.namespace AND i.key = f.key
)
SELECT namespace, key, value, created_at, updated_at, score FROM found
 ORDER BY score DESC NULLS LAST, updated_at DESC, namespace, key;
