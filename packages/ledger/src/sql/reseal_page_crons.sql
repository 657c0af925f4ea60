-- reseal_page_crons.sql
-- One page of crons for the re-seal, in key order after the cursor (see reseal_page_jobs.sql).
-- Params: $1 cursor (jsonb [cron_id] or NULL), $2 page size
-- Returns: the key and the sealed columns of up to $2 rows.
SELECT cron_id, input, metadata
  FROM crons
 WHERE $1::jsonb IS NULL OR cron_id > $1::jsonb->>0
 ORDER BY cron_id
 LIMIT $2;
