-- tail_run_stream.sql
-- One poll of a run's shared stream tail (one per run per producer, however many clients watch):
-- the run's status and its chunks after an id, from one snapshot, so a status that says the run
-- settled comes with every chunk written before it.
-- Params: $1 job_id, $2 after event_id, $3 limit (0 = the status alone)
-- Returns: one row per chunk, oldest first, each with the run's status (one row with a null
-- event_id when there is no chunk); no row when the job does not exist.
SELECT j.status, e.event_id, e.attempt, e.event, e.data
  FROM jobs j
  LEFT JOIN LATERAL (SELECT s.event_id, s.attempt, s.event, s.data
                       FROM run_stream_events s
                      WHERE s.job_id = j.job_id AND s.event_id > $2
                      ORDER BY s.event_id
                      LIMIT $3) e ON true
 WHERE j.job_id = $1
 ORDER BY e.event_id;
