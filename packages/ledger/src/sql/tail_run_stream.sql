-- tail_run_stream.sql
-- One poll of a run's shared stream tail (one per run per producer, however many clients watch):
-- the run's status and its chunks after a number, from one snapshot, so a status that says the run
-- settled comes with every chunk written before it.
-- Params: $1 job_id, $2 after seq (-1 = from the start), $3 limit (0 = the status alone)
-- Returns: one row per chunk, oldest first, each with the run's status (one row with a null
-- seq when there is no chunk); no row when the job does not exist.
SELECT j.status, e.seq, e.attempt, e.event, e.data
  FROM jobs j
  LEFT JOIN LATERAL (SELECT s.seq, s.attempt, s.event, s.data
                       FROM run_stream_events s
                      WHERE s.job_id = j.job_id AND s.seq > $2
                      ORDER BY s.seq
                      LIMIT $3) e ON true
 WHERE j.job_id = $1
 ORDER BY e.seq;
