-- record_rate_limited.sql
-- Tells why an accepted job waits in the queue: a `rate_limited` event, once per attempt
-- (a held-back job is retried many times; its timeline says it once).
-- Params: $1 job_id, $2 detail (jsonb: graph, reason, limits)
-- Returns: nothing.
INSERT INTO job_events (job_id, type, attempt, fencing_token, detail)
SELECT j.job_id, 'rate_limited', j.attempt, j.fencing_token, $2 FROM jobs j
 WHERE j.job_id = $1
   AND NOT EXISTS (SELECT 1 FROM job_events e WHERE e.job_id = j.job_id AND e.type = 'rate_limited' AND e.attempt = j.attempt);
