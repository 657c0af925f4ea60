-- record_cron_firings.sql
-- Records what became of scheduled times of a cron, once each (the key refuses a second record).
-- Params: $1 cron_id, $2 scheduled_at[], $3 outcome[] ('admitted' | 'caught_up' | 'missed'), $4 job_id[] (null when missed)
-- Returns: nothing.
INSERT INTO cron_firings (cron_id, scheduled_at, outcome, job_id)
SELECT $1, t.scheduled_at, t.outcome, t.job_id FROM unnest($2::timestamptz[], $3::text[], $4::text[]) AS t(scheduled_at, outcome, job_id)
ON CONFLICT (cron_id, scheduled_at) DO NOTHING;
