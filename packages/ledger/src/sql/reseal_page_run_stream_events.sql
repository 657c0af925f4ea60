-- reseal_page_run_stream_events.sql
-- One page of stream chunks for the re-seal, in key order after the cursor (see reseal_page_jobs.sql).
-- Params: $1 cursor (jsonb [job_id, event_id] or NULL), $2 page size
-- Returns: the key and the data of up to $2 rows.
SELECT job_id, event_id, data
  FROM run_stream_events
 WHERE $1::jsonb IS NULL OR (job_id, event_id) > ($1::jsonb->>0, ($1::jsonb->>1)::bigint)
 ORDER BY job_id, event_id
 LIMIT $2;
