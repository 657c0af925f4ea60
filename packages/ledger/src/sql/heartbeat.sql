-- heartbeat.sql
-- Renews every lease a worker holds in one statement and records the worker as alive.
-- Params: $1 worker_id, $2 job_ids (text[]), $3 fencing tokens (bigint[]), $4 lease ttl (ms)
-- Returns: the job ids whose lease could not be renewed (lost: newer claim, cancel, expiry). A
-- lease already past its expiry is never renewed, even before a sweep has moved it.
WITH held AS (
  SELECT * FROM unnest($2::text[], $3::bigint[]) AS h(job_id, token)
), renewed AS (
  UPDATE jobs j
     SET lease_expires_at = now() + make_interval(secs => $4::double precision / 1000)
    FROM held h
   -- `(…) IS TRUE` keeps the lookup on the key, one probe per held job, off jobs_lease_owner
   -- (docs/decisions/0005-cost-at-scale.md, "A job's own statements find it by key").
   WHERE j.job_id = h.job_id AND j.fencing_token = h.token
     AND (j.lease_owner = $1 AND j.status IN ('starting', 'running')) IS TRUE
     AND j.lease_expires_at > clock_timestamp()
  RETURNING j.job_id
), seen AS (
  INSERT INTO workers (worker_id) VALUES ($1)
  ON CONFLICT (worker_id) DO UPDATE SET last_seen_at = now()
)
SELECT h.job_id FROM held h WHERE h.job_id NOT IN (SELECT job_id FROM renewed);
