-- store_put.sql
-- Puts (value not null) or deletes (value null) one item of a tenant's store. From a graph the
-- write is fenced like a checkpoint (put_writes.sql): applied only while the job's token holds
-- the lease, the job row share-locked for the statement; from the API ($4 null) unfenced.
-- A put keeps created_at (unless the item it replaces had expired) and moves updated_at, sets the
-- item's ttl (null: never expires) and replaces its vectors with the given ones (none: the item
-- is not indexed). A delete of a missing item changes nothing; its vectors go with it.
-- Params: $1 tenant, $2 namespace text[], $3 key, $4 job_id (null: no fence), $5 fencing_token,
--   $6 value jsonb (null: delete), $7 ttl minutes (null: none), $8 indexed field paths text[],
--   $9 their unit-length embeddings, each a real[] literal (text[], same order as $8)
-- Returns: one row: `held` (no fence asked, or the fence held and the write was applied).
WITH fence AS MATERIALIZED (
  SELECT job_id FROM jobs
   -- `(status …) IS TRUE` keeps the lookup on the key (docs/decisions/0005-cost-at-scale.md, "A job's own statements find it by key").
   WHERE job_id = $4 AND fencing_token = $5 AND (status IN ('starting', 'running')) IS TRUE
     AND lease_expires_at > clock_timestamp()
     FOR SHARE
), allowed AS (
  SELECT $4::text IS NULL OR EXISTS (SELECT 1 FROM fence) AS ok
), put AS (
  INSERT INTO store_items (tenant, namespace, key, value, ttl_minutes, expires_at)
  SELECT $1, $2::text[], $3, $6::jsonb, $7::float8, clock_timestamp() + $7::float8 * interval '1 minute'
   WHERE $6::jsonb IS NOT NULL AND (SELECT ok FROM allowed)
  ON CONFLICT (tenant, namespace, key) DO UPDATE
     SET value = EXCLUDED.value, updated_at = clock_timestamp(), ttl_minutes = EXCLUDED.ttl_minutes, expires_at = EXCLUDED.expires_at,
         created_at = CASE WHEN store_items.expires_at <= clock_timestamp() THEN clock_timestamp() ELSE store_items.created_at END
), vectors AS (
  INSERT INTO store_vectors (tenant, namespace, key, field, embedding)
  SELECT $1, $2::text[], $3, f, v::real[] FROM unnest($8::text[], $9::text[]) AS u(f, v)
   WHERE $6::jsonb IS NOT NULL AND (SELECT ok FROM allowed)
  ON CONFLICT (tenant, namespace, key, field) DO UPDATE SET embedding = EXCLUDED.embedding
), stale AS (
  DELETE FROM store_vectors
   WHERE $6::jsonb IS NOT NULL AND (SELECT ok FROM allowed) AND tenant = $1 AND namespace = $2::text[] AND key = $3
     AND field <> ALL ($8::text[])
), gone AS (
  DELETE FROM store_items
   WHERE $6::jsonb IS NULL AND (SELECT ok FROM allowed) AND tenant = $1 AND namespace = $2::text[] AND key = $3
)
SELECT ok AS held FROM allowed;
