-- wait_for_version.sql
-- After a claim was refused as not_served (the worker does not serve the job's graph and
-- version): appends the job's `waiting_for_version` event the first time it waits for this
-- version, and tells whether a live worker serves it. The caller then redelivers the job for that
-- worker, or drops the delivery: the reconciler delivers it once a worker serving it is live
-- (list_undelivered.sql). The row is locked, so the event carries the token as it stands.
-- Params: $1 job_id
-- Returns: graph, graph_version, served; no row when the job is no longer accepted or
-- recovery_required (claimed meanwhile, cancelled …).
WITH j AS (
  SELECT job_id, graph, graph_version, attempt, fencing_token FROM jobs
   WHERE job_id = $1 AND status IN ('accepted', 'recovery_required')
     FOR UPDATE
), ev AS (
  INSERT INTO job_events (job_id, type, attempt, fencing_token, detail)
  SELECT j.job_id, 'waiting_for_version', j.attempt, j.fencing_token,
         jsonb_build_object('graph', j.graph, 'version', j.graph_version,
                            'served', graph_version_served(j.graph, j.graph_version))
    FROM j
   WHERE NOT EXISTS (SELECT 1 FROM job_events e
                      WHERE e.job_id = j.job_id AND e.type = 'waiting_for_version'
                        AND e.detail ->> 'version' IS NOT DISTINCT FROM j.graph_version)
)
SELECT graph, graph_version, graph_version_served(graph, graph_version) AS served FROM j;
