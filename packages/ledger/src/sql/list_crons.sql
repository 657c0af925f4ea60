-- list_crons.sql
-- Cron definitions, oldest first, each with its latest handled firing.
-- Params: $1 tenant (null = every tenant)
-- Returns: crons rows plus last_scheduled_at and last_outcome.
SELECT c.*, f.scheduled_at AS last_scheduled_at, f.outcome AS last_outcome
  FROM crons c
  LEFT JOIN LATERAL (SELECT scheduled_at, outcome FROM cron_firings WHERE cron_id = c.cron_id ORDER BY scheduled_at DESC LIMIT 1) f ON true
 WHERE $1::text IS NULL OR c.tenant = $1
 ORDER BY c.created_at, c.cron_id
 LIMIT 1000;
