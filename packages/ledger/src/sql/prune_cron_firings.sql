-- prune_cron_firings.sql
-- Retention: removes up to $2 cron_firings rows (one per scheduled time a cron handled, kept so
-- that time is handled once) of times before now() - $1 days. Each cron keeps its latest firing
-- whatever its age: list_crons.sql shows it as the cron's last outcome, and a cron's next time
-- comes from crons.next_fire_at, so no older firing is read again. Found per cron through the
-- primary key (cron_id, scheduled_at) and deleted by ctid, as in prune_finished_threads.sql.
-- Params: $1 age in days (double precision), $2 most rows removed by this statement
-- Returns: one row per firing removed.
WITH cutoff AS (
  SELECT now() - make_interval(secs => $1::double precision * 86400) AS at
), doomed AS (
  SELECT x.ctid AS row FROM crons c CROSS JOIN LATERAL (
    SELECT f.ctid FROM cron_firings f, cutoff
     WHERE f.cron_id = c.cron_id AND f.scheduled_at < cutoff.at
       AND f.scheduled_at < (SELECT max(m.scheduled_at) FROM cron_firings m WHERE m.cron_id = c.cron_id)
     LIMIT $2
    OFFSET 0) x
   LIMIT $2
)
DELETE FROM cron_firings WHERE ctid = ANY (ARRAY(SELECT row FROM doomed))
RETURNING 1;
