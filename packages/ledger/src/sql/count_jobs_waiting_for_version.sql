-- count_jobs_waiting_for_version.sql
-- Jobs ready to run but for a worker: accepted or recovery_required, of a graph and version no
-- live worker serves (graph_version_served), by graph and version.
-- Params: none
-- Returns: graph, graph_version (null = none recorded), count; one row per pair that waits.
SELECT graph, graph_version, count FROM (
  SELECT graph, graph_version, count(*)::bigint AS count FROM jobs
   WHERE status IN ('accepted', 'recovery_required')
   GROUP BY graph, graph_version
) AS waiting
 WHERE NOT graph_version_served(graph, graph_version);
