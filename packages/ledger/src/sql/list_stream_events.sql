-- list_stream_events.sql
-- A run's stream chunks after a given id, oldest first (SSE replay and tail).
-- Params: $1 job_id, $2 after event_id (0 = from the start), $3 limit
-- Returns: event rows.
SELECT event_id, attempt, event, data
  FROM run_stream_events
 WHERE job_id = $1 AND event_id > $2
 ORDER BY event_id
 LIMIT $3;
