-- roll_up_event_minutes.sql
-- Counts the job_events of finished minutes from event_minute_span.rolled_to on into
-- event_minutes and moves rolled_to past them (migration 0017), at most $1 minutes per call, so
-- a sweep after downtime stays short. A minute is finished one minute after it ends and not
-- before the oldest open writing transaction of this database began: `at` is clock_timestamp()
-- at insert, so an event of a transaction still open could otherwise commit into a minute
-- already counted. Writes nothing while the span is up to date (59 of 60 one-second sweeps).
-- Concurrent callers are serialised by a transaction advisory lock per schema (one that does not
-- get it counts nothing), and the span moves only from the value this statement read (a caller
-- whose snapshot predates another's move updates no row and counts nothing): no minute twice.
-- Index job_events_type_at: the types by a loose index scan, then one range scan per type.
-- Params: $1 most minutes per call (integer)
-- Returns: one row: rolled (minutes counted by this call), behind (finished minutes left uncounted).
WITH RECURSIVE span AS (
  SELECT s.rolled_to AS lo,
         least(date_trunc('minute', now() - interval '1 minute', 'UTC'),
               (SELECT date_trunc('minute', min(a.xact_start), 'UTC') FROM pg_stat_activity a
                 WHERE a.backend_xid IS NOT NULL AND a.datname = current_database() AND a.pid <> pg_backend_pid())) AS safe
    FROM event_minute_span s
   WHERE s.rolled_to < date_trunc('minute', now() - interval '1 minute', 'UTC')
), step AS (
  SELECT lo, least(safe, lo + make_interval(mins => $1::integer)) AS hi
    FROM span
   WHERE safe > lo AND pg_try_advisory_xact_lock(hashtextextended('runledger.event_minutes:' || current_schema(), 0))
), moved AS (
  UPDATE event_minute_span s SET rolled_to = step.hi FROM step WHERE s.rolled_to = step.lo
  RETURNING step.lo, step.hi
), types AS (
  SELECT (SELECT min(type) FROM job_events) AS type FROM moved
  UNION ALL
  SELECT (SELECT min(e.type) FROM job_events e WHERE e.type > t.type) FROM types t WHERE t.type IS NOT NULL
), counted AS (
  INSERT INTO event_minutes (type, minute, n)
  SELECT t.type, c.minute, c.n
    FROM moved, types t,
         LATERAL (SELECT date_trunc('minute', e.at, 'UTC') AS minute, count(*) AS n
                    FROM job_events e WHERE e.type = t.type AND e.at >= moved.lo AND e.at < moved.hi GROUP BY 1) c
   WHERE t.type IS NOT NULL
  ON CONFLICT (type, minute) DO UPDATE SET n = event_minutes.n + excluded.n
)
SELECT coalesce((SELECT extract(epoch FROM hi - lo) / 60 FROM moved), 0)::integer AS rolled,
       coalesce((SELECT hi FROM moved) < (SELECT safe FROM span), (SELECT safe > lo FROM span), false) AS behind;
