-- reseal_page_jobs.sql
-- One page of jobs for the re-seal, in key order after the cursor (keyset pagination: no
-- offset, no lock; a plain read).
-- Params: $1 cursor (jsonb [job_id] of the last row handled, NULL for the first page), $2 page size
-- Returns: the key and the sealed columns of up to $2 rows.
SELECT job_id, input, result, interrupt, resume_value, metadata, idempotency_key_sealed, webhook, error
  FROM jobs
 WHERE $1::jsonb IS NULL OR job_id > $1::jsonb->>0
 ORDER BY job_id
 LIMIT $2;
