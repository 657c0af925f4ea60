-- claim_lease.sql
-- Takes the lease (starting, or running when the job already has a checkpoint): bumps the fencing token, sets owner and expiry by the database clock.
-- Claimable: accepted, recovery_required (once due), or leased with an expired lease; and
-- no earlier unfinished job of the same thread (admission order) and no other leased one.
-- A drained hand-over does not count as an attempt.
-- Params: $1 job_id, $2 worker_id, $3 lease ttl (ms)
-- Returns: the claimed job row plus `previous_status`, or no row when refused.
WITH prev AS (
  SELECT job_id, status, recovery_reason FROM jobs WHERE job_id = $1 FOR UPDATE
), upd AS (
  UPDATE jobs j
     SET status = CASE WHEN j.first_checkpoint_at IS NULL THEN 'starting' ELSE 'running' END,
         attempt = j.attempt + CASE WHEN j.recovery_reason = 'drained' AND j.status = 'recovery_required' THEN 0 ELSE 1 END,
         fencing_token = j.fencing_token + 1,
         lease_owner = $2,
         lease_expires_at = now() + make_interval(secs => $3::double precision / 1000),
         started_at = coalesce(j.started_at, now()),
         run_after = NULL,
         updated_at = now()
    FROM prev
   WHERE j.job_id = prev.job_id
     AND (j.status IN ('accepted', 'recovery_required')
          OR (j.status IN ('starting', 'running') AND j.lease_expires_at < now()))
     AND (j.run_after IS NULL OR j.run_after <= now() OR j.status <> 'recovery_required')
     AND NOT EXISTS (
       SELECT 1 FROM jobs o
        WHERE o.thread_id = j.thread_id AND o.job_id <> j.job_id
          AND ((o.seq < j.seq AND o.status NOT IN ('completed', 'failed', 'cancelled'))
               OR o.status IN ('starting', 'running')))
  RETURNING j.*, prev.status AS previous_status, prev.recovery_reason AS previous_reason
), ev AS (
  INSERT INTO job_events (job_id, type, attempt, fencing_token, worker_id, detail)
  SELECT job_id, 'claimed', attempt, fencing_token, $2,
         jsonb_build_object('from', previous_status, 'reason', previous_reason)
    FROM upd
)
SELECT * FROM upd;
