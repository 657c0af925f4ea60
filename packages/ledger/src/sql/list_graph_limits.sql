-- list_graph_limits.sql
-- Every graph limit, with what it holds back now: leased runs of the graph and waiting jobs
-- (accepted, or recovering from an earlier attempt) held back in their current attempt
-- (`rate_limited` event of that attempt: record_rate_limited.sql).
-- Params: none
-- Returns: graph_limits rows plus running and held_back.
SELECT l.graph, l.max_per_interval, l.interval_ms, l.max_concurrent, l.updated_at,
       (SELECT count(*) FROM jobs j WHERE j.graph = l.graph AND j.status IN ('starting', 'running') AND j.lease_expires_at > now())::int AS running,
       (SELECT count(*) FROM jobs j WHERE j.graph = l.graph AND j.status IN ('accepted', 'recovery_required')
           AND EXISTS (SELECT 1 FROM job_events e WHERE e.job_id = j.job_id AND e.type = 'rate_limited' AND e.attempt = j.attempt))::int AS held_back
  FROM graph_limits l ORDER BY l.graph;
