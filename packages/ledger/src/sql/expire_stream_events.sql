-- expire_stream_events.sql
-- Retention of the stream log: removes up to $2 stream chunks of runs that ended (completed,
-- failed, cancelled) before now() - $1 milliseconds. A run that is still open keeps its log.
-- Params: $1 age in milliseconds (bigint), $2 most rows removed by this statement
-- Returns: one row per chunk removed.
DELETE FROM run_stream_events
 WHERE (job_id, event_id) IN (
        SELECT e.job_id, e.event_id
          FROM run_stream_events e
          JOIN jobs j ON j.job_id = e.job_id
         WHERE j.status IN ('completed', 'failed', 'cancelled')
           AND j.completed_at < now() - make_interval(secs => $1::bigint / 1000.0)
         LIMIT $2)
RETURNING 1;
