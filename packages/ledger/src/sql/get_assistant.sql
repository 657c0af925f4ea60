-- get_assistant.sql
-- A tenant's stored assistant at its current version, and the highest version it has.
-- Params: $1 tenant, $2 assistant_id
-- Returns: one row, none when the tenant has no assistant of that id.
SELECT a.assistant_id, v.graph_id, v.name, v.description, v.config, v.context, v.metadata,
       a.version, a.created_at, a.updated_at,
       (SELECT max(w.version) FROM assistant_versions w WHERE w.tenant = a.tenant AND w.assistant_id = a.assistant_id) AS last_version
  FROM assistants a
  JOIN assistant_versions v USING (tenant, assistant_id, version)
 WHERE a.tenant = $1 AND a.assistant_id = $2;
