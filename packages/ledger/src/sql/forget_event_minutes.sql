-- forget_event_minutes.sql
-- Retention of the counted minutes (migration 0017), after drop_job_event_partitions: deletes the
-- minutes older than every remaining day partition of job_events (none while the partition of
-- everything before migration 0012 remains) and moves event_minute_span.rolled_from up to there,
-- so the chart counts what job_events still holds. Events the DEFAULT partition keeps from
-- those days are below rolled_from again and counted back by the next backfill. Run after
-- lock_event_minutes.sql in the same transaction. Deletes nothing while rolled_from is newer.
-- Params: none
-- Returns: one row: minutes (rows deleted).
WITH parts AS (
  SELECT pg_get_expr(c.relpartbound, c.oid) AS bound
    FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
   WHERE i.inhparent = 'job_events'::regclass AND pg_get_expr(c.relpartbound, c.oid) <> 'DEFAULT'
), cut AS (
  SELECT CASE WHEN NOT bool_or(bound LIKE 'FOR VALUES FROM (MINVALUE)%')
              THEN min(substring(bound FROM $r$FROM \('([^']+)'\)$r$)::timestamptz) END AS at
    FROM parts
), raised AS (
  UPDATE event_minute_span s SET rolled_from = least(cut.at, s.rolled_to) FROM cut WHERE s.rolled_from < cut.at
), gone AS (
  DELETE FROM event_minutes WHERE minute < (SELECT at FROM cut) AND (SELECT rolled_from FROM event_minute_span) < (SELECT at FROM cut)
  RETURNING 1
)
SELECT count(*)::bigint AS minutes FROM gone;
