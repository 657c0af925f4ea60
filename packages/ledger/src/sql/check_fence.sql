-- check_fence.sql
-- Holds a share lock on the job row until the surrounding transaction ends, so a newer
-- claim (which updates the row) waits for it, then sees the old token and is the one that wins.
-- Params: $1 job_id, $2 fencing_token
-- Returns: one row while the token is current and the job is leased.
SELECT job_id FROM jobs
 WHERE job_id = $1 AND fencing_token = $2 AND status IN ('starting', 'running')
   FOR SHARE;
