-- expire_leases.sql
-- Turns expired leases into recovery_required (a worker died or was paused). Safe with many
-- reconcilers at once: rows another sweeper holds are skipped.
-- Params: $1 batch size
-- Returns: the job ids moved.
WITH exp AS (
  SELECT job_id, lease_owner FROM jobs
   WHERE status IN ('starting', 'running') AND lease_expires_at < now()
   ORDER BY lease_expires_at LIMIT $1
     FOR UPDATE SKIP LOCKED
), upd AS (
  UPDATE jobs j
     SET status = 'recovery_required', recovery_reason = 'lease_expired',
         lease_owner = NULL, lease_expires_at = NULL, updated_at = now()
    FROM exp WHERE j.job_id = exp.job_id
  RETURNING j.job_id, j.attempt, j.fencing_token, exp.lease_owner
), ev AS (
  INSERT INTO job_events (job_id, type, attempt, fencing_token, worker_id, detail)
  SELECT job_id, 'recovery_required', attempt, fencing_token, lease_owner, '{"reason":"lease_expired"}'::jsonb FROM upd
)
SELECT job_id FROM upd;
