-- reseal_crons.sql
-- Swaps values of crons re-sealed with the current key in, each only if the column still holds
-- the value that was read (compare-and-swap on the old ciphertext): a value the API wrote since
-- is kept, never clobbered. One short statement per batch, row locks only while it runs.
-- Params: $1 jsonb array of { key: [cron_id], old: { column: stored value }, new: { column: re-sealed value } }
-- Returns: one row per row touched, swapped = how many of its columns now hold the re-sealed value.
UPDATE crons AS t
   SET input = CASE WHEN u.new ? 'input' AND t.input = u.old->'input' THEN u.new->'input' ELSE t.input END,
       metadata = CASE WHEN u.new ? 'metadata' AND t.metadata = u.old->'metadata' THEN u.new->'metadata' ELSE t.metadata END
  FROM jsonb_to_recordset($1::jsonb) AS u(key jsonb, old jsonb, new jsonb)
 WHERE t.cron_id = u.key->>0
   AND EXISTS (SELECT 1 FROM jsonb_each(u.old) o WHERE to_jsonb(t) -> o.key = o.value)
RETURNING (SELECT count(*) FROM jsonb_each(u.new) n WHERE to_jsonb(t) -> n.key = n.value) AS swapped;
