-- count_events_by_bucket.sql
-- Timeline events of the given types per time bucket (the dashboard's "jobs by status over
-- time" chart). Index job_events_type_at: one range scan per type, index only.
-- Params: $1 from (timestamptz, also the buckets' origin), $2 to (timestamptz, exclusive),
--         $3 bucket width (seconds), $4 event types (text[])
-- Returns: bucket (start, timestamptz), type, count; empty buckets are left out.
SELECT date_bin(make_interval(secs => $3::double precision), at, $1::timestamptz) AS bucket, type, count(*)::bigint AS count
  FROM job_events
 WHERE type = ANY ($4::text[]) AND at >= $1::timestamptz AND at < $2::timestamptz
 GROUP BY 1, 2
 ORDER BY 1, 2;
