-- set_assistant_version.sql
-- Makes one of a tenant's assistant's versions the current one.
-- Params: $1 tenant, $2 assistant_id, $3 version
-- Returns: one row, none when the assistant or that version of it does not exist.
UPDATE assistants a
   SET version = $3, updated_at = now()
 WHERE a.tenant = $1 AND a.assistant_id = $2
   AND EXISTS (SELECT 1 FROM assistant_versions v WHERE v.tenant = $1 AND v.assistant_id = $2 AND v.version = $3)
RETURNING a.assistant_id;
