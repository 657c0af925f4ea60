-- reseal_job_events.sql
-- Swaps values of job_events re-sealed with the current key in, each only if the column still holds
-- the value that was read (compare-and-swap on the old ciphertext): a value a worker or the API
-- wrote since is kept, never clobbered. One short statement per batch, row locks only while it runs.
-- Params: $1 jsonb array of { key: [job_id, event_id], old: { column: stored value }, new: { column: re-sealed value } }
-- Returns: one row per row touched, swapped = how many of its columns now hold the re-sealed value.
UPDATE job_events AS t
   SET detail = CASE WHEN u.new ? 'detail' AND t.detail = u.old->'detail' THEN u.new->'detail' ELSE t.detail END
  FROM jsonb_to_recordset($1::jsonb) AS u(key jsonb, old jsonb, new jsonb)
 WHERE t.job_id = u.key->>0 AND t.event_id = (u.key->>1)::bigint
   AND EXISTS (SELECT 1 FROM jsonb_each(u.old) o WHERE to_jsonb(t) -> o.key = o.value)
RETURNING (SELECT count(*) FROM jsonb_each(u.new) n WHERE to_jsonb(t) -> n.key = n.value) AS swapped;
