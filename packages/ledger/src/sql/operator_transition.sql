-- operator_transition.sql
-- A person's action on a job (cancel, resume, replay, resolve), scoped to a tenant.
-- Moves the job only from one of the listed states; clears any lease, so a running
-- worker's next fenced write or heartbeat fails and it stops.
-- Params: $1 job_id, $2 tenant (null = any), $3 allowed from-states (text[]), $4 new status,
--         $5 event type, $6 detail (jsonb), $7 resume_value (jsonb), $8 result (jsonb),
--         $9 error (jsonb), $10 recovery_reason
-- Returns: the updated row with version_served as in get_job.sql, or none when the job is missing or in another state.
WITH upd AS (
  UPDATE jobs
     SET status = $4,
         resume_value = coalesce($7, resume_value),
         result = coalesce($8, result),
         error = coalesce($9, error),
         recovery_reason = $10,
         attempt = CASE WHEN $4 = 'accepted' THEN 0 ELSE attempt END,
         interrupt = CASE WHEN $4 = 'accepted' THEN NULL ELSE interrupt END,
         run_after = NULL,
         lease_owner = NULL,
         lease_expires_at = NULL,
         completed_at = CASE WHEN $4 IN ('completed', 'failed', 'cancelled') THEN now() ELSE completed_at END,
         updated_at = now()
   WHERE job_id = $1 AND ($2::text IS NULL OR tenant = $2) AND status = ANY ($3::text[])
  RETURNING *
), ev AS (
  INSERT INTO job_events (job_id, type, attempt, fencing_token, detail)
  SELECT job_id, $5, attempt, fencing_token, $6 FROM upd
)
SELECT upd.*,
       job_version_served(upd.status, upd.graph, upd.graph_version) AS version_served
  FROM upd;
