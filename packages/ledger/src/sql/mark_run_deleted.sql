-- mark_run_deleted.sql
-- A finished run deleted through the LangGraph API (its DELETE): the row stays as the ledger's
-- receipt, status, result, error, events and effects unchanged; recovery_reason becomes 'deleted'
-- (the LangGraph API then answers 404 for it) and a `deleted` event records the reason it replaced.
-- Params: $1 job_id, $2 tenant (null = any), $3 detail (jsonb)
-- Returns: the updated row with version_served as in get_job.sql, or none when the job is missing,
--          another tenant's, unfinished, or deleted already.
WITH old AS (
  SELECT job_id, recovery_reason FROM jobs
   WHERE job_id = $1 AND ($2::text IS NULL OR tenant = $2)
     AND status IN ('completed', 'failed', 'cancelled') AND recovery_reason IS DISTINCT FROM 'deleted'
     FOR UPDATE
), upd AS (
  UPDATE jobs j SET recovery_reason = 'deleted', updated_at = now()
    FROM old WHERE j.job_id = old.job_id
  RETURNING j.*, old.recovery_reason AS previous_reason
), ev AS (
  INSERT INTO job_events (job_id, type, attempt, fencing_token, detail)
  SELECT job_id, 'deleted', attempt, fencing_token, $3::jsonb || jsonb_build_object('previousReason', previous_reason) FROM upd
)
SELECT upd.*,
       job_version_served(upd.status, upd.graph, upd.graph_version) AS version_served
  FROM upd;
