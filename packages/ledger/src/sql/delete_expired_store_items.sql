-- delete_expired_store_items.sql
-- The store's sweep: deletes up to $1 items of any tenant whose ttl ran out (their vectors go
-- with them). Expired items are already invisible to every read; this frees their rows.
-- Params: $1 batch size
-- Returns: `deleted`, how many.
WITH expired AS (
  SELECT tenant, namespace, key FROM store_items
   WHERE expires_at <= clock_timestamp()
   ORDER BY expires_at
   LIMIT $1
     FOR UPDATE SKIP LOCKED
), gone AS (
  DELETE FROM store_items i USING expired e
   WHERE i.tenant = e.tenant AND i.namespace = e.namespace AND i.key = e.key
  RETURNING 1
)
SELECT count(*)::int AS deleted FROM gone;
