-- insert_assistant_version.sql
-- Adds a version to a tenant's assistant (under lock_assistant.sql).
-- Params: $1 tenant, $2 assistant_id, $3 version, $4 graph_id, $5 name, $6 description (jsonb,
--   sealed), $7 config (jsonb, sealed), $8 context (jsonb, sealed), $9 metadata (jsonb)
-- Returns: nothing.
INSERT INTO assistant_versions (tenant, assistant_id, version, graph_id, name, description, config, context, metadata)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9);
