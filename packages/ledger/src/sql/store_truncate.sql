-- store_truncate.sql
-- Deletes every item of a tenant's store (POST /internal/truncate with `store`, a test hook).
-- Params: $1 tenant
-- Returns: nothing.
DELETE FROM store_items WHERE tenant = $1;
