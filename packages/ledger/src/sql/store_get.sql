-- store_get.sql
-- One item of a tenant's store (LedgerStore.get).
-- Params: $1 tenant, $2 namespace text[], $3 key
-- Returns: the item's row, none when there is no such item.
SELECT namespace, key, value, created_at, updated_at
  FROM store_items
 WHERE tenant = $1 AND namespace = $2::text[] AND key = $3;
