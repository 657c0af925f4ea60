-- last_stream_event_id.sql
-- The newest stream chunk number (seq) of a run, so a client resuming it sees only what comes next.
-- Params: $1 job_id
-- Returns: one row, last_id (-1 when the run has no chunk).
SELECT coalesce(max(seq), -1) AS last_id FROM run_stream_events WHERE job_id = $1;
