-- store_get.sql
-- One item of a tenant's store (LedgerStore.get), unless it expired. With $4 a read that
-- refreshes: an item with a ttl expires its ttl from now again (langgraph.json
-- `store.ttl.refresh_on_read`, the API's `refresh_ttl`).
-- Params: $1 tenant, $2 namespace text[], $3 key, $4 refresh boolean
-- Returns: the item's row, none when there is no such item or it expired.
WITH item AS (
  SELECT namespace, key, value, created_at, updated_at
    FROM store_items
   WHERE tenant = $1 AND namespace = $2::text[] AND key = $3
     AND (expires_at IS NULL OR expires_at > clock_timestamp())
), refreshed AS (
  UPDATE store_items SET expires_at = clock_timestamp() + ttl_minutes * interval '1 minute'
   WHERE $4::boolean AND ttl_minutes IS NOT NULL AND EXISTS (SELECT 1 FROM item)
     AND tenant = $1 AND namespace = $2::text[] AND key = $3
)
SELECT * FROM item;
