-- wait_for_thread.sql
-- After a claim was refused as thread_busy: names the job holding the thread (an earlier
-- unfinished job, or another one holding a lease; the claim rule of claim_lease.sql) and, the
-- first time this job waits for that one, appends its `waiting_for_thread` event. The caller
-- then drops the delivery: whoever ends the holding job delivers the next one, and the
-- reconciler skips a job whose thread is held (list_undelivered.sql). The job row is locked, so
-- the event carries the token of the row as it stands, never one a concurrent claim replaced.
-- Params: $1 job_id
-- Returns: blocked_by (null: nothing holds the thread now, claim again), or no row when the job
-- is no longer accepted or recovery_required (claimed meanwhile, cancelled …).
WITH j AS (
  SELECT job_id, tenant, thread_id, seq, attempt, fencing_token FROM jobs
   WHERE job_id = $1 AND status IN ('accepted', 'recovery_required')
     FOR UPDATE
), b AS (
  SELECT j.*,
         (SELECT job_id FROM thread_holder(j.tenant, j.thread_id, j.job_id, j.seq)) AS blocked_by
    FROM j
), ev AS (
  INSERT INTO job_events (job_id, type, attempt, fencing_token, detail)
  SELECT b.job_id, 'waiting_for_thread', b.attempt, b.fencing_token, jsonb_build_object('blockedBy', b.blocked_by)
    FROM b
   WHERE b.blocked_by IS NOT NULL
     AND NOT EXISTS (SELECT 1 FROM job_events e
                      WHERE e.job_id = b.job_id AND e.type = 'waiting_for_thread' AND e.detail ->> 'blockedBy' = b.blocked_by)
)
SELECT blocked_by FROM b;
