-- drop_job_event_partitions.sql
-- Retention of the timeline: drops the partitions of job_events whose every row is older than
-- $1 days, waiting at most $2 ms for the lock (drop_job_event_partitions(), migration 0012).
-- Params: $1 age in days (double precision), $2 lock wait (ms)
-- Returns: one row: partitions (dropped), estimated_rows (their rows, from planner statistics).
SELECT partitions, estimated_rows
  FROM drop_job_event_partitions(make_interval(secs => $1::double precision * 86400), make_interval(secs => $2::double precision / 1000));
