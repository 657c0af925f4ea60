-- delete_graph_limit.sql
-- Params: $1 graph
-- Returns: graph when there was a limit.
DELETE FROM graph_limits WHERE graph = $1 RETURNING graph;
