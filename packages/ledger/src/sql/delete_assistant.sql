-- delete_assistant.sql
-- Deletes a tenant's assistant and all its versions.
-- Params: $1 tenant, $2 assistant_id
-- Returns: one row, none when the tenant has no assistant of that id.
DELETE FROM assistants WHERE tenant = $1 AND assistant_id = $2 RETURNING assistant_id;
