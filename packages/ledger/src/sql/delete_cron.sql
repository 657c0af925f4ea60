-- delete_cron.sql
-- Removes a cron and its firing records; the jobs it admitted stay.
-- Params: $1 cron_id, $2 tenant (null = any)
-- Returns: cron_id when deleted.
DELETE FROM crons WHERE cron_id = $1 AND ($2::text IS NULL OR tenant = $2) RETURNING cron_id;
