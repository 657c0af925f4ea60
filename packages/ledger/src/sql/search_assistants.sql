-- search_assistants.sql
-- A tenant's assistants, stored ones at their current version together with the built-in ones
-- the producer passes in (one per served graph), filtered, sorted and paged.
-- Params: $1 tenant, $2 built-in assistants (jsonb array of { assistant_id, graph_id, name,
--   description, metadata, created_at }), $3 graph_id (null = any), $4 name substring (case
--   insensitive; null = any), $5 metadata that must be contained (jsonb, null = any), $6 sort
--   column (assistant_id | graph_id | name | created_at | updated_at), $7 'asc' | 'desc', $8 limit, $9 offset
-- Returns: assistant rows, each with total = how many match in all.
WITH found AS (
  SELECT a.assistant_id, v.graph_id, v.name, v.description, v.config, v.context, v.metadata, a.version, a.created_at, a.updated_at
    FROM assistants a JOIN assistant_versions v USING (tenant, assistant_id, version)
   WHERE a.tenant = $1
  UNION ALL
  SELECT b.assistant_id, b.graph_id, b.name, b.description, '{}'::jsonb, '{}'::jsonb, b.metadata, 1, b.created_at, b.created_at
    FROM jsonb_to_recordset($2::jsonb) AS b (assistant_id text, graph_id text, name text, description jsonb, metadata jsonb, created_at timestamptz)
), matching AS (
  SELECT * FROM found
   WHERE ($3::text IS NULL OR graph_id = $3)
     AND ($4::text IS NULL OR strpos(lower(name), lower($4)) > 0)
     AND ($5::jsonb IS NULL OR metadata @> $5)
)
SELECT *, count(*) OVER () AS total FROM matching
 ORDER BY CASE WHEN $7 = 'asc' THEN CASE $6 WHEN 'assistant_id' THEN assistant_id WHEN 'graph_id' THEN graph_id WHEN 'name' THEN name END END ASC,
          CASE WHEN $7 = 'desc' THEN CASE $6 WHEN 'assistant_id' THEN assistant_id WHEN 'graph_id' THEN graph_id WHEN 'name' THEN name END END DESC,
          CASE WHEN $7 = 'asc' THEN CASE $6 WHEN 'created_at' THEN created_at WHEN 'updated_at' THEN updated_at END END ASC,
          CASE WHEN $7 = 'desc' THEN CASE $6 WHEN 'created_at' THEN created_at WHEN 'updated_at' THEN updated_at END END DESC,
          assistant_id
 LIMIT $8 OFFSET $9;
