-- store_namespaces.sql
-- The distinct namespaces of a tenant's store (LedgerStore.listNamespaces), cut to max_depth
-- labels, matching a prefix and a suffix in which '*' matches any one label.
-- Params: $1 tenant, $2 prefix text[] (null: any), $3 suffix text[] (null: any), $4 max_depth
--   (null: whole namespaces), $5 limit, $6 offset
-- Returns: rows of `namespace`, in order.
SELECT DISTINCT CASE WHEN $4::int IS NULL THEN namespace ELSE namespace[1:$4::int] END AS namespace
  FROM store_items
 WHERE tenant = $1 AND (expires_at IS NULL OR expires_at > clock_timestamp())
   AND ($2::text[] IS NULL OR (cardinality(namespace) >= cardinality($2::text[]) AND NOT EXISTS (
         SELECT 1 FROM generate_subscripts($2::text[], 1) AS i
          WHERE ($2::text[])[i] <> '*' AND namespace[i] <> ($2::text[])[i])))
   AND ($3::text[] IS NULL OR (cardinality(namespace) >= cardinality($3::text[]) AND NOT EXISTS (
         SELECT 1 FROM generate_subscripts($3::text[], 1) AS i
          WHERE ($3::text[])[i] <> '*'
            AND namespace[cardinality(namespace) - cardinality($3::text[]) + i] <> ($3::text[])[i])))
 ORDER BY 1
 LIMIT $5 OFFSET $6;
