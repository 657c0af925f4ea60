-- admit_job.sql
-- Records an admission and its `accepted` event in one statement. With an idempotency key
-- already taken by the tenant it inserts nothing (the caller then reads the existing job).
-- Params: $1 job_id, $2 tenant, $3 idempotency_key, $4 request_hash, $5 graph, $6 thread_id,
--         $7 input (jsonb), $8 metadata (jsonb), $9 max_attempts, $10 timeout_ms
-- Returns: the new job row, or no row when the key was taken.
WITH ins AS (
  INSERT INTO jobs (job_id, tenant, idempotency_key, request_hash, graph, thread_id, input, metadata, max_attempts, timeout_ms)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
  ON CONFLICT (tenant, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
  RETURNING *
), ev AS (
  INSERT INTO job_events (job_id, type, attempt, fencing_token, detail)
  SELECT job_id, 'accepted', 0, 0, jsonb_build_object('graph', graph, 'threadId', thread_id) FROM ins
)
SELECT * FROM ins;
