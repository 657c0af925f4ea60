-- reseal_effects.sql
-- Swaps values of effects re-sealed with the current key in, each only if the column still holds
-- the value that was read (compare-and-swap on the old ciphertext): a value a worker or the API
-- wrote since is kept, never clobbered. One short statement per batch, row locks only while it runs.
-- Params: $1 jsonb array of { key: [job_id, effect_key], old: { column: stored value }, new: { column: re-sealed value } }
-- Returns: one row per row touched, swapped = how many of its columns now hold the re-sealed value.
UPDATE effects AS t
   SET result = CASE WHEN u.new ? 'result' AND t.result = u.old->'result' THEN u.new->'result' ELSE t.result END,
       error = CASE WHEN u.new ? 'error' AND t.error = u.old->'error' THEN u.new->'error' ELSE t.error END
  FROM jsonb_to_recordset($1::jsonb) AS u(key jsonb, old jsonb, new jsonb)
 WHERE t.job_id = u.key->>0 AND t.effect_key = u.key->>1
   AND EXISTS (SELECT 1 FROM jsonb_each(u.old) o WHERE to_jsonb(t) -> o.key = o.value)
RETURNING (SELECT count(*) FROM jsonb_each(u.new) n WHERE to_jsonb(t) -> n.key = n.value) AS swapped;
