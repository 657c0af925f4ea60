-- reseal_page_assistant_versions.sql
-- One page of assistant versions for the re-seal, in key order after the cursor (see reseal_page_jobs.sql).
-- Params: $1 cursor (jsonb [tenant, assistant_id, version] or NULL), $2 page size
-- Returns: the key and the sealed columns of up to $2 rows.
SELECT tenant, assistant_id, version, description, config, context
  FROM assistant_versions
 WHERE $1::jsonb IS NULL OR (tenant, assistant_id, version) > ($1::jsonb->>0, $1::jsonb->>1, ($1::jsonb->>2)::integer)
 ORDER BY tenant, assistant_id, version
 LIMIT $2;
