-- upsert_graph_limit.sql
-- Sets a graph's limits (null = no such limit); a row with neither is removed by delete_graph_limit.sql instead.
-- Params: $1 graph, $2 max_per_interval, $3 interval_ms, $4 max_concurrent
-- Returns: the row.
INSERT INTO graph_limits (graph, max_per_interval, interval_ms, max_concurrent)
VALUES ($1, $2, $3, $4)
ON CONFLICT (graph) DO UPDATE
   SET max_per_interval = $2, interval_ms = $3, max_concurrent = $4, updated_at = now()
RETURNING *;
