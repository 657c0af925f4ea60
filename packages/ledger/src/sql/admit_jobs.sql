-- admit_jobs.sql
-- Records many admissions and their `accepted` events in one statement (group commit).
-- Rows whose tenant + idempotency key is already taken are skipped; the caller admits those
-- one by one to learn whether they are duplicates or conflicts.
-- Params: parallel arrays $1 job_id, $2 tenant, $3 idempotency_key, $4 request_hash, $5 graph,
--         $6 thread_id, $7 input (jsonb), $8 metadata (jsonb), $9 max_attempts, $10 timeout_ms
-- Returns: the inserted job rows.
WITH input AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
                       $7::jsonb[], $8::jsonb[], $9::int[], $10::int[]) WITH ORDINALITY
    AS t(job_id, tenant, idempotency_key, request_hash, graph, thread_id, input, metadata, max_attempts, timeout_ms, n)
), ins AS (
  INSERT INTO jobs (job_id, tenant, idempotency_key, request_hash, graph, thread_id, input, metadata, max_attempts, timeout_ms)
  SELECT job_id, tenant, idempotency_key, request_hash, graph, thread_id, input, metadata, max_attempts, timeout_ms
    FROM input ORDER BY n
  ON CONFLICT (tenant, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
  RETURNING *
), ev AS (
  INSERT INTO job_events (job_id, type, attempt, fencing_token, detail)
  SELECT job_id, 'accepted', 0, 0, jsonb_build_object('graph', graph, 'threadId', thread_id) FROM ins
)
SELECT * FROM ins;
