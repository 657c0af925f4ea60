-- end_attempt.sql
-- Ends the current lease holder's attempt: completed, failed, interrupted (parked),
-- recovery_required (released, retry later) or manual_reconcile. Fenced: a stale token,
-- a cancelled job or a lease past its expiry by the database clock (swept or not) changes nothing.
-- Params: $1 job_id, $2 fencing_token, $3 new status, $4 event type, $5 event detail (jsonb),
--         $6 result (jsonb), $7 error (jsonb), $8 interrupt (jsonb), $9 recovery_reason,
--         $10 run_after delay (ms, null = now)
-- Returns: one row on success, none when the lease was lost, with other_jobs_on_thread: another
-- job of the thread is unfinished, so a job that just ended (completed, failed) hands the thread
-- on (handOffThread). Read from the statement's snapshot: a job admitted while this one ends can
-- miss its hand-off and is then delivered by the reconciler (list_undelivered.sql).
WITH upd AS (
  UPDATE jobs
     SET status = $3,
         result = coalesce($6, result),
         error = coalesce($7, error),
         interrupt = $8,
         recovery_reason = $9,
         run_after = CASE WHEN $10::bigint IS NULL THEN NULL
                          ELSE now() + make_interval(secs => $10::double precision / 1000) END,
         resume_value = NULL,
         lease_owner = NULL,
         lease_expires_at = NULL,
         completed_at = CASE WHEN $3 IN ('completed', 'failed') THEN now() END,
         updated_at = now()
   -- `(status …) IS TRUE` keeps the lookup on the key (docs/decisions/0005-cost-at-scale.md, "A job's own statements find it by key").
   WHERE job_id = $1 AND fencing_token = $2 AND (status IN ('starting', 'running')) IS TRUE
     AND lease_expires_at > clock_timestamp()
  RETURNING job_id, attempt, fencing_token, tenant, thread_id
), ev AS (
  INSERT INTO job_events (job_id, type, attempt, fencing_token, worker_id, detail)
  SELECT upd.job_id, $4, upd.attempt, upd.fencing_token, prev.lease_owner, $5
    FROM upd JOIN jobs prev ON prev.job_id = upd.job_id
)
SELECT upd.job_id,
       EXISTS (SELECT 1 FROM jobs o
                WHERE o.tenant = upd.tenant AND o.thread_id = upd.thread_id AND o.job_id <> upd.job_id
                  AND o.status NOT IN ('completed', 'failed', 'cancelled')) AS other_jobs_on_thread
  FROM upd;
