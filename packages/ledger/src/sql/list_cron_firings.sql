-- list_cron_firings.sql
-- The latest handled scheduled times of a cron, newest first.
-- Params: $1 cron_id, $2 limit
-- Returns: cron_firings rows.
SELECT * FROM cron_firings WHERE cron_id = $1 ORDER BY scheduled_at DESC LIMIT $2;
