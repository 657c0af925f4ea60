-- reseal_page_effects.sql
-- One page of effects for the re-seal, in key order after the cursor (see reseal_page_jobs.sql).
-- Params: $1 cursor (jsonb [job_id, effect_key] or NULL), $2 page size
-- Returns: the key and the sealed columns of up to $2 rows.
SELECT job_id, effect_key, result, error
  FROM effects
 WHERE $1::jsonb IS NULL OR (job_id, effect_key) > ($1::jsonb->>0, $1::jsonb->>1)
 ORDER BY job_id, effect_key
 LIMIT $2;
