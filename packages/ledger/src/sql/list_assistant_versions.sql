-- list_assistant_versions.sql
-- The versions of a tenant's assistant, newest first.
-- Params: $1 tenant, $2 assistant_id, $3 metadata that must be contained (jsonb, null = any), $4 limit, $5 offset
-- Returns: version rows.
SELECT assistant_id, version, graph_id, name, description, config, context, metadata, created_at
  FROM assistant_versions
 WHERE tenant = $1 AND assistant_id = $2 AND ($3::jsonb IS NULL OR metadata @> $3)
 ORDER BY version DESC
 LIMIT $4 OFFSET $5;
