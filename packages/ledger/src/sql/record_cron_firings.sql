-- record_cron_firings.sql
-- Records what became of scheduled times of a cron, once each (the key refuses a second record).
-- Params: $1 cron_id, $2 scheduled_at[], $3 outcome[] ('admitted' | 'caught_up' | 'missed' | 'failed'),
--         $4 job_id[] (null unless admitted or caught up), $5 reason[] (why a time failed; else null)
-- Returns: nothing.
INSERT INTO cron_firings (cron_id, scheduled_at, outcome, job_id, reason)
SELECT $1, t.scheduled_at, t.outcome, t.job_id, t.reason
  FROM unnest($2::timestamptz[], $3::text[], $4::text[], $5::text[]) AS t(scheduled_at, outcome, job_id, reason)
ON CONFLICT (cron_id, scheduled_at) DO NOTHING;
