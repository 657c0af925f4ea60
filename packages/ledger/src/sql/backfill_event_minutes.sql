-- backfill_event_minutes.sql
-- Counts job_events older than event_minute_span.rolled_from into event_minutes and moves
-- rolled_from back (migration 0017): the history of a ledger migrated with events in it, or rows
-- written later with an explicit older `at`. Finds the newest such event (per type one index
-- probe) and counts the $1 minutes ending with its minute up to rolled_from, so a call reads at
-- most $1 minutes of events and a gap of idle days is crossed in one call. Waits, like
-- roll_up_event_minutes.sql, until rolled_from is a finished minute; same lock, same guard
-- against a concurrent move.
-- Params: $1 most minutes per call (integer)
-- Returns: one row: more (older events may remain, or another caller held the lock: call again).
WITH RECURSIVE span AS (
  SELECT s.rolled_from AS hi
    FROM event_minute_span s
   WHERE s.rolled_from <= least(date_trunc('minute', now() - interval '1 minute', 'UTC'),
                                (SELECT date_trunc('minute', min(a.xact_start), 'UTC') FROM pg_stat_activity a
                                  WHERE a.backend_xid IS NOT NULL AND a.datname = current_database() AND a.pid <> pg_backend_pid()))
), locked AS (
  SELECT hi FROM span WHERE pg_try_advisory_xact_lock(hashtextextended('runledger.event_minutes:' || current_schema(), 0))
), types AS (
  SELECT (SELECT min(type) FROM job_events) AS type FROM locked
  UNION ALL
  SELECT (SELECT min(e.type) FROM job_events e WHERE e.type > t.type) FROM types t WHERE t.type IS NOT NULL
), newest AS (
  SELECT max(o.at) AS at
    FROM locked, types t, LATERAL (SELECT max(e.at) AS at FROM job_events e WHERE e.type = t.type AND e.at < locked.hi) o
   WHERE t.type IS NOT NULL
), step AS (
  SELECT date_trunc('minute', newest.at, 'UTC') - make_interval(mins => $1::integer - 1) AS lo, locked.hi
    FROM locked, newest
   WHERE newest.at IS NOT NULL
), moved AS (
  UPDATE event_minute_span s SET rolled_from = step.lo FROM step WHERE s.rolled_from = step.hi
  RETURNING step.lo, step.hi
), counted AS (
  INSERT INTO event_minutes (type, minute, n)
  SELECT t.type, c.minute, c.n
    FROM moved, types t,
         LATERAL (SELECT date_trunc('minute', e.at, 'UTC') AS minute, count(*) AS n
                    FROM job_events e WHERE e.type = t.type AND e.at >= moved.lo AND e.at < moved.hi GROUP BY 1) c
   WHERE t.type IS NOT NULL
  ON CONFLICT (type, minute) DO UPDATE SET n = event_minutes.n + excluded.n
)
SELECT EXISTS (SELECT 1 FROM span) AND (NOT EXISTS (SELECT 1 FROM locked) OR EXISTS (SELECT 1 FROM moved)) AS more;
