-- reseal_assistant_versions.sql
-- Swaps values of assistant versions re-sealed with the current key in, each only if the column
-- still holds the value that was read (see reseal_effects.sql).
-- Params: $1 jsonb array of { key: [tenant, assistant_id, version], old: { column: stored value }, new: { column: re-sealed value } }
-- Returns: one row per row touched, swapped = how many of its columns now hold the re-sealed value.
UPDATE assistant_versions AS t
   SET description = CASE WHEN u.new ? 'description' AND t.description = u.old->'description' THEN u.new->'description' ELSE t.description END,
       config = CASE WHEN u.new ? 'config' AND t.config = u.old->'config' THEN u.new->'config' ELSE t.config END,
       context = CASE WHEN u.new ? 'context' AND t.context = u.old->'context' THEN u.new->'context' ELSE t.context END
  FROM jsonb_to_recordset($1::jsonb) AS u(key jsonb, old jsonb, new jsonb)
 WHERE t.tenant = u.key->>0 AND t.assistant_id = u.key->>1 AND t.version = (u.key->>2)::integer
   AND EXISTS (SELECT 1 FROM jsonb_each(u.old) o WHERE to_jsonb(t) -> o.key = o.value)
RETURNING (SELECT count(*) FROM jsonb_each(u.new) n WHERE to_jsonb(t) -> n.key = n.value) AS swapped;
