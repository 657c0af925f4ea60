-- list_events.sql
-- Params: $1 job_id
-- Returns: the job's timeline, oldest first.
SELECT * FROM job_events WHERE job_id = $1 ORDER BY event_id;
