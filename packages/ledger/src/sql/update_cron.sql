-- update_cron.sql
-- Changes a cron; null keeps a field. A new schedule, timezone or re-enabling comes with a new
-- next_fire_at (the caller computes it from now), so times passed while it was off are not fired.
-- Params: $1 cron_id, $2 tenant (null = any), $3 schedule, $4 timezone, $5 input (jsonb), $6 missed,
--         $7 enabled, $8 next_fire_at, $9 metadata (jsonb), $10 whether to set end_time, $11 end_time (null = never ends)
-- Returns: the row, or none when it does not exist for this tenant.
UPDATE crons
   SET schedule = coalesce($3, schedule),
       timezone = coalesce($4, timezone),
       input = CASE WHEN $5::jsonb IS NULL THEN input ELSE $5 END,
       missed = coalesce($6, missed),
       enabled = coalesce($7, enabled),
       next_fire_at = coalesce($8, next_fire_at),
       metadata = CASE WHEN $9::jsonb IS NULL THEN metadata ELSE $9 END,
       end_time = CASE WHEN $10::boolean THEN $11::timestamptz ELSE end_time END,
       updated_at = now()
 WHERE cron_id = $1 AND ($2::text IS NULL OR tenant = $2)
RETURNING *;
