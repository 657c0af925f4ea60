-- record_checkpoint.sql
-- starting → running on the job's first durable checkpoint; runs inside the saver's own
-- transaction, so the checkpoint and the transition commit together or not at all.
-- Params: $1 job_id, $2 fencing_token
-- Returns: one row when this call made the transition.
WITH upd AS (
  UPDATE jobs SET status = 'running', first_checkpoint_at = coalesce(first_checkpoint_at, now()), updated_at = now()
   -- `(status …) IS TRUE` keeps the lookup on the key (docs/decisions/0005-cost-at-scale.md, "A job's own statements find it by key").
   WHERE job_id = $1 AND fencing_token = $2 AND (status = 'starting') IS TRUE AND lease_expires_at > clock_timestamp()
  RETURNING job_id, attempt, fencing_token, lease_owner
), ev AS (
  INSERT INTO job_events (job_id, type, attempt, fencing_token, worker_id)
  SELECT job_id, 'checkpointed', attempt, fencing_token, lease_owner FROM upd
)
SELECT job_id FROM upd;
