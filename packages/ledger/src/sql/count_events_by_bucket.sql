-- count_events_by_bucket.sql
-- Timeline events of the given types per time bucket (the dashboard's "jobs by status over
-- time" chart): inside event_minute_span the counted minutes of event_minutes (primary key, one
-- range per type, index only), outside it job_events itself (index job_events_type_at, one range
-- scan per type): the minutes before a backfill has reached them, and the last minute or two not
-- yet counted. The counted minutes are used only when every minute falls in one bucket (width a
-- whole number of minutes, `from` on a minute); otherwise the whole window is read from job_events.
-- Params: $1 from (timestamptz, also the buckets' origin), $2 to (timestamptz, exclusive),
--         $3 bucket width (seconds), $4 event types (text[])
-- Returns: bucket (start, timestamptz), type, count; empty buckets are left out.
WITH span AS (
  -- [a, b) from event_minutes; [from, a) and [b, to) from job_events.
  SELECT CASE WHEN ok THEN lo ELSE $2::timestamptz END AS a, CASE WHEN ok THEN hi ELSE $2::timestamptz END AS b
    FROM (SELECT greatest(rolled_from, $1::timestamptz) AS lo, least(rolled_to, date_trunc('minute', $2::timestamptz, 'UTC')) AS hi
            FROM event_minute_span) s,
         LATERAL (SELECT lo < hi AND $1::timestamptz = date_trunc('minute', $1::timestamptz, 'UTC')
                         AND $3::double precision / 60 = floor($3::double precision / 60) AS ok) o
), counts AS (
  SELECT m.minute AS at, m.type, m.n
    FROM event_minutes m
   WHERE m.type = ANY ($4::text[]) AND m.minute >= (SELECT a FROM span) AND m.minute < (SELECT b FROM span)
  UNION ALL
  SELECT e.at, e.type, 1
    FROM job_events e
   WHERE e.type = ANY ($4::text[]) AND e.at >= $1::timestamptz AND e.at < coalesce((SELECT a FROM span), $2::timestamptz)
  UNION ALL
  SELECT e.at, e.type, 1
    FROM job_events e
   WHERE e.type = ANY ($4::text[]) AND e.at >= coalesce((SELECT b FROM span), $2::timestamptz) AND e.at < $2::timestamptz
)
SELECT date_bin(make_interval(secs => $3::double precision), at, $1::timestamptz) AS bucket, type, sum(n)::bigint AS count
  FROM counts
 GROUP BY 1, 2
 ORDER BY 1, 2;
