-- list_crons.sql
-- Cron definitions, oldest first, keyset-paged on (created_at, cron_id), each with its latest
-- handled firing.
-- Params: $1 tenant (null = every tenant), $2 cursor created_at in µs since the epoch (null = start),
--         $3 cursor cron_id, $4 limit
-- Returns: crons rows plus created_us (the cursor's first half), last_scheduled_at, last_outcome and last_reason.
SELECT c.*, (extract(epoch FROM c.created_at) * 1000000)::bigint AS created_us,
       f.scheduled_at AS last_scheduled_at, f.outcome AS last_outcome, f.reason AS last_reason
  FROM crons c
  LEFT JOIN LATERAL (SELECT scheduled_at, outcome, reason FROM cron_firings WHERE cron_id = c.cron_id ORDER BY scheduled_at DESC LIMIT 1) f ON true
 WHERE ($1::text IS NULL OR c.tenant = $1)
   AND ($2::bigint IS NULL OR (c.created_at, c.cron_id) > ('epoch'::timestamptz + $2::bigint * interval '1 microsecond', $3::text))
 ORDER BY c.created_at, c.cron_id
 LIMIT $4;
