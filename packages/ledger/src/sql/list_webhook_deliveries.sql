-- list_webhook_deliveries.sql
-- A job's webhook deliveries (one per run end), oldest first, each with its attempts and their
-- answers; and whether the job has a webhook at all (the sealed URL's NULL-ness).
-- Params: $1 job_id
-- Returns: one row with has_webhook and NULL delivery columns when the job has no delivery yet;
--          no row when the job does not exist.
SELECT j.webhook IS NOT NULL AS has_webhook, d.delivery_id, d.run_status, d.ended_at, d.state, d.attempts, d.due_at, d.settled_at,
       COALESCE(d.answers, '[]'::jsonb) AS answers
  FROM jobs j
  LEFT JOIN webhook_deliveries d ON d.job_id = j.job_id
 WHERE j.job_id = $1
 ORDER BY d.ended_at, d.delivery_id;
