-- ensure_job_event_partitions.sql
-- Creates the missing daily partitions of job_events (UTC days) from $1 days ago to $2 days
-- ahead (ensure_job_event_partitions(), migration 0012).
-- Params: $1 days back (integer), $2 days ahead (integer)
-- Returns: one row: created (partitions created).
SELECT ensure_job_event_partitions($1::integer, $2::integer) AS created;
