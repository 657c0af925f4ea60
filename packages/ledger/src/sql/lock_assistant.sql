-- lock_assistant.sql
-- Holds a tenant's assistant row until the transaction ends, so versions are added one at a time.
-- Params: $1 tenant, $2 assistant_id
-- Returns: one row, none when the tenant has no assistant of that id.
SELECT assistant_id FROM assistants WHERE tenant = $1 AND assistant_id = $2 FOR UPDATE;
