-- admit_jobs.sql
-- Records many admissions and their `accepted` events in one statement (group commit). Each
-- admission issues the job's first delivery (id = job_id, deliveries = 1) in the same row, so
-- handing it to the queue needs no second write to `jobs`: the admitter only appends an
-- `enqueued` event (record_enqueued.sql) once the queue took it. The reconciler finds an issued
-- delivery that never reached the queue (list_undelivered.sql) and issues the next one.
-- Rows whose tenant + idempotency key is already taken are skipped; the caller admits those
-- one by one to learn whether they are duplicates or conflicts. With encryption on the key is a
-- digest, and a row is also taken when the tenant holds one of its older forms (a digest under
-- a key before rotation, or the plaintext from before encryption), which the unique index cannot
-- compare.
-- Params: parallel arrays $1 job_id, $2 tenant, $3 idempotency_key, $4 request_hash (null without a key), $5 graph,
--         $6 thread_id, $7 input (jsonb), $8 metadata (jsonb), $9 max_attempts, $10 timeout_ms,
--         $11 idempotency_key_sealed (jsonb; null when encryption is off),
--         $12 older forms of the key (jsonb array of text; null when none),
--         $13 run_after (due time; null = now), $14 priority (0 = none),
--         $15 graph_version (the version of the graph that will run the job; null = any),
--         $16 trace_context (the admission span's W3C traceparent; null when tracing is off),
--         $17 webhook (jsonb: the URL, sealed when encryption is on; null = none; migration 0022)
-- Returns: job_id, seq and accepted_at of each inserted row (the caller knows the rest: it wrote it).
WITH input AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
                       $7::jsonb[], $8::jsonb[], $9::int[], $10::int[], $11::jsonb[], $12::jsonb[],
                       $13::timestamptz[], $14::int[], $15::text[], $16::text[], $17::jsonb[]) WITH ORDINALITY
    AS t(job_id, tenant, idempotency_key, request_hash, graph, thread_id, input, metadata, max_attempts, timeout_ms,
         idempotency_key_sealed, older_keys, run_after, priority, graph_version, trace_context, webhook, n)
), ins AS (
  INSERT INTO jobs (job_id, tenant, idempotency_key, request_hash, graph, thread_id, input, metadata, max_attempts, timeout_ms,
                    idempotency_key_sealed, run_after, priority, graph_version, trace_context, webhook, deliveries, delivery_id, enqueued_at)
  SELECT job_id, tenant, idempotency_key, request_hash, graph, thread_id, input, metadata, max_attempts, timeout_ms,
         idempotency_key_sealed, run_after, priority, graph_version, trace_context, webhook, 1, job_id, now()
    FROM input
   WHERE older_keys IS NULL
      OR NOT EXISTS (SELECT 1 FROM jobs o
                      WHERE o.tenant = input.tenant
                        AND o.idempotency_key IN (SELECT jsonb_array_elements_text(input.older_keys)))
   ORDER BY n
  ON CONFLICT (tenant, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
  RETURNING job_id, seq, graph, graph_version, thread_id, accepted_at
), ev AS (
  INSERT INTO job_events (job_id, type, attempt, fencing_token, detail)
  SELECT job_id, 'accepted', 0, 0,
         jsonb_strip_nulls(jsonb_build_object('graph', graph, 'threadId', thread_id, 'version', graph_version)) FROM ins
)
SELECT job_id, seq, accepted_at FROM ins;
