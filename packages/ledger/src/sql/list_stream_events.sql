-- list_stream_events.sql
-- A run's stream chunks after a given number, oldest first (SSE replay and tail).
-- Params: $1 job_id, $2 after seq (-1 = from the start), $3 limit
-- Returns: event rows, each with its seq.
SELECT seq, attempt, event, data
  FROM run_stream_events
 WHERE job_id = $1 AND seq > $2
 ORDER BY seq
 LIMIT $3;
