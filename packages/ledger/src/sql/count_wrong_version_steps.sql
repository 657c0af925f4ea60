-- count_wrong_version_steps.sql
-- Rows a worker wrote for a job whose graph version it did not serve (chaos audit, deploys): every
-- job_events row naming a worker (its claims, steps, checkpoints, ends), against the version that
-- worker announced for the job's graph (`workers.info.versions`, register_worker.sql). The job's
-- version at the time of the row is the `from` of the first `upgraded` event after it, else the
-- job's current graph_version; jobs with no version (any worker may run them) are not counted. A
-- worker with no announcement counts as wrong.
-- Params: none
-- Returns: one row: checked (rows compared), count, claims (of them `claimed`), sample (up to 5 lines).
WITH rows AS (
  SELECT e.job_id, e.type, e.worker_id,
         coalesce((SELECT u.detail ->> 'from' FROM job_events u
                    WHERE u.job_id = e.job_id AND u.type = 'upgraded' AND u.event_id > e.event_id
                    ORDER BY u.event_id LIMIT 1), j.graph_version) AS version,
         w.info -> 'versions' ->> j.graph AS served
    FROM job_events e
    JOIN jobs j ON j.job_id = e.job_id
    LEFT JOIN workers w ON w.worker_id = e.worker_id
   WHERE e.worker_id IS NOT NULL AND j.graph_version IS NOT NULL
), wrong AS (
  SELECT * FROM rows WHERE served IS DISTINCT FROM version
)
SELECT (SELECT count(*) FROM rows)::bigint AS checked,
       count(*)::bigint AS count,
       (count(*) FILTER (WHERE type = 'claimed'))::bigint AS claims,
       (array_agg(job_id || ' ' || type || ' by ' || worker_id || ' serving ' || coalesce(served, 'nothing') || ', job at ' || version))[1:5] AS sample
  FROM wrong;
