-- update_cron.sql
-- Changes a cron; null keeps a field. A new schedule, timezone or re-enabling comes with a new
-- next_fire_at (the caller computes it from now), so times passed while it was off are not fired.
-- Params: $1 cron_id, $2 tenant (null = any), $3 schedule, $4 timezone, $5 input (jsonb), $6 missed,
--         $7 enabled, $8 next_fire_at
-- Returns: the row, or none when it does not exist for this tenant.
UPDATE crons
   SET schedule = coalesce($3, schedule),
       timezone = coalesce($4, timezone),
       input = CASE WHEN $5::jsonb IS NULL THEN input ELSE $5 END,
       missed = coalesce($6, missed),
       enabled = coalesce($7, enabled),
       next_fire_at = coalesce($8, next_fire_at),
       updated_at = now()
 WHERE cron_id = $1 AND ($2::text IS NULL OR tenant = $2)
RETURNING *;
