-- reseal_jobs.sql
-- Swaps values of jobs re-sealed with the current key in, each only if the column still holds
-- the value that was read (compare-and-swap on the old ciphertext): a value a worker or the API
-- wrote since is kept, never clobbered. One short statement per batch, row locks only while it runs.
-- Params: $1 jsonb array of { key: [job_id], old: { column: stored value }, new: { column: re-sealed value } }
-- Returns: one row per row touched, swapped = how many of its columns now hold the re-sealed value.
UPDATE jobs AS t
   SET input = CASE WHEN u.new ? 'input' AND t.input = u.old->'input' THEN u.new->'input' ELSE t.input END,
       result = CASE WHEN u.new ? 'result' AND t.result = u.old->'result' THEN u.new->'result' ELSE t.result END,
       interrupt = CASE WHEN u.new ? 'interrupt' AND t.interrupt = u.old->'interrupt' THEN u.new->'interrupt' ELSE t.interrupt END,
       resume_value = CASE WHEN u.new ? 'resume_value' AND t.resume_value = u.old->'resume_value' THEN u.new->'resume_value' ELSE t.resume_value END,
       metadata = CASE WHEN u.new ? 'metadata' AND t.metadata = u.old->'metadata' THEN u.new->'metadata' ELSE t.metadata END,
       idempotency_key_sealed = CASE WHEN u.new ? 'idempotency_key_sealed' AND t.idempotency_key_sealed = u.old->'idempotency_key_sealed' THEN u.new->'idempotency_key_sealed' ELSE t.idempotency_key_sealed END,
       webhook = CASE WHEN u.new ? 'webhook' AND t.webhook = u.old->'webhook' THEN u.new->'webhook' ELSE t.webhook END,
       error = CASE WHEN u.new ? 'error' AND t.error = u.old->'error' THEN u.new->'error' ELSE t.error END
  FROM jsonb_to_recordset($1::jsonb) AS u(key jsonb, old jsonb, new jsonb)
 WHERE t.job_id = u.key->>0
   AND EXISTS (SELECT 1 FROM jsonb_each(u.old) o WHERE to_jsonb(t) -> o.key = o.value)
RETURNING (SELECT count(*) FROM jsonb_each(u.new) n WHERE to_jsonb(t) -> n.key = n.value) AS swapped;
