-- recovery_times_by_bucket.sql
-- Recovery time: from a `recovery_required` event to the job's next `claimed` event, per
-- time bucket of the recovery_required event. Index job_events_type_at finds the recoveries,
-- job_events_claimed (job_id, event_id) WHERE type = 'claimed' the claim after each.
-- Params: $1 from (timestamptz, also the buckets' origin), $2 to (timestamptz, exclusive),
--         $3 bucket width (seconds)
-- Returns: bucket, recoveries, recovered (claimed again so far), p50_ms, p95_ms, max_ms
--          (null when none recovered).
WITH rec AS (
  SELECT r.at, extract(epoch FROM (c.at - r.at)) * 1000 AS ms
    FROM job_events r
    LEFT JOIN LATERAL (
      SELECT n.at FROM job_events n
       WHERE n.job_id = r.job_id AND n.event_id > r.event_id AND n.type = 'claimed'
       ORDER BY n.event_id LIMIT 1
    ) c ON true
   WHERE r.type = 'recovery_required' AND r.at >= $1::timestamptz AND r.at < $2::timestamptz
)
SELECT date_bin(make_interval(secs => $3::double precision), at, $1::timestamptz) AS bucket,
       count(*)::bigint AS recoveries,
       count(ms)::bigint AS recovered,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50_ms,
       percentile_cont(0.95) WITHIN GROUP (ORDER BY ms) AS p95_ms,
       max(ms) AS max_ms
  FROM rec
 GROUP BY 1
 ORDER BY 1;
