-- create_assistant.sql
-- Creates a tenant's assistant with its first version; a tenant's existing assistant of that id is left as it is.
-- Params: $1 tenant, $2 assistant_id, $3 graph_id, $4 name, $5 description (jsonb, sealed), $6 config
--   (jsonb, sealed), $7 context (jsonb, sealed), $8 metadata (jsonb)
-- Returns: the new assistant (as get_assistant.sql), none when the tenant has one of that id.
WITH a AS (
  INSERT INTO assistants (tenant, assistant_id, version)
  VALUES ($1, $2, 1)
  ON CONFLICT (tenant, assistant_id) DO NOTHING
  RETURNING tenant, assistant_id, version, created_at, updated_at
), v AS (
  INSERT INTO assistant_versions (tenant, assistant_id, version, graph_id, name, description, config, context, metadata, created_at)
  SELECT tenant, assistant_id, version, $3, $4, $5, $6, $7, $8, created_at FROM a
  RETURNING tenant, assistant_id, graph_id, name, description, config, context, metadata
)
SELECT a.assistant_id, v.graph_id, v.name, v.description, v.config, v.context, v.metadata,
       a.version, a.created_at, a.updated_at, a.version AS last_version
  FROM a JOIN v USING (tenant, assistant_id);
