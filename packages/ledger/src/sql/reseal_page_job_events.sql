-- reseal_page_job_events.sql
-- One page of events for the re-seal, in (job_id, event_id) order after the cursor (the
-- job_events_job_event index; see reseal_page_jobs.sql).
-- Params: $1 cursor (jsonb [job_id, event_id] or NULL), $2 page size
-- Returns: the key and the detail of up to $2 rows.
SELECT job_id, event_id, detail
  FROM job_events
 WHERE $1::jsonb IS NULL OR (job_id, event_id) > ($1::jsonb->>0, ($1::jsonb->>1)::bigint)
 ORDER BY job_id, event_id
 LIMIT $2;
