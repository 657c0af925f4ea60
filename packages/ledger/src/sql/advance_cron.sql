-- advance_cron.sql
-- Moves a cron's next firing past the times just handled (in the transaction that recorded them).
-- Params: $1 cron_id, $2 next_fire_at
-- Returns: nothing.
UPDATE crons SET next_fire_at = $2, updated_at = now() WHERE cron_id = $1;
