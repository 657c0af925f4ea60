-- append_event.sql
-- Adds a timeline row for the current lease holder (decisions such as resumed or replayed).
-- Fenced: nothing is written for a stale token.
-- Params: $1 job_id, $2 fencing_token, $3 type, $4 detail (jsonb)
-- Returns: one row when written.
INSERT INTO job_events (job_id, type, attempt, fencing_token, worker_id, detail)
SELECT job_id, $3, attempt, fencing_token, lease_owner, $4
  FROM jobs
 -- `(status …) IS TRUE` keeps the lookup on the key (docs/decisions/0005-cost-at-scale.md, "A job's own statements find it by key").
 WHERE job_id = $1 AND fencing_token = $2 AND (status IN ('starting', 'running')) IS TRUE
   AND lease_expires_at > clock_timestamp()
   FOR SHARE
RETURNING event_id;
