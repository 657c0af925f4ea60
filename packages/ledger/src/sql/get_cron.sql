-- get_cron.sql
-- Params: $1 cron_id, $2 tenant (null = any)
-- Returns: the crons row, or none.
SELECT * FROM crons WHERE cron_id = $1 AND ($2::text IS NULL OR tenant = $2);
