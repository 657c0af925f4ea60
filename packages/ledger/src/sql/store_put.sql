-- store_put.sql
-- Puts (value not null) or deletes (value null) one item of a tenant's store. From a graph the
-- write is fenced like a checkpoint (put_writes.sql): applied only while the job's token holds
-- the lease, the job row share-locked for the statement; from the API ($4 null) unfenced.
-- A put keeps created_at and moves updated_at; a delete of a missing item changes nothing.
-- Params: $1 tenant, $2 namespace text[], $3 key, $4 job_id (null: no fence), $5 fencing_token,
--   $6 value jsonb (null: delete)
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
  INSERT INTO store_items (tenant, namespace, key, value)
  SELECT $1, $2::text[], $3, $6::jsonb WHERE $6::jsonb IS NOT NULL AND (SELECT ok FROM allowed)
  ON CONFLICT (tenant, namespace, key) DO UPDATE SET value = EXCLUDED.value, updated_at = clock_timestamp()
), gone AS (
  DELETE FROM store_items
   WHERE $6::jsonb IS NULL AND (SELECT ok FROM allowed) AND tenant = $1 AND namespace = $2::text[] AND key = $3
)
SELECT ok AS held FROM allowed;
