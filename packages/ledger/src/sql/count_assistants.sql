-- count_assistants.sql
-- How many of a tenant's assistants match (as search_assistants.sql, built-in ones included).
-- Params: $1 tenant, $2 built-in assistants (jsonb, as search_assistants.sql), $3 graph_id, $4 name substring, $5 metadata
-- Returns: one row: n.
WITH found AS (
  SELECT v.graph_id, v.name, v.metadata
    FROM assistants a JOIN assistant_versions v USING (tenant, assistant_id, version)
   WHERE a.tenant = $1
  UNION ALL
  SELECT b.graph_id, b.name, b.metadata FROM jsonb_to_recordset($2::jsonb) AS b (graph_id text, name text, metadata jsonb)
)
SELECT count(*) AS n FROM found
 WHERE ($3::text IS NULL OR graph_id = $3)
   AND ($4::text IS NULL OR strpos(lower(name), lower($4)) > 0)
   AND ($5::jsonb IS NULL OR metadata @> $5);
