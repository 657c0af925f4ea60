-- list_limited_graphs.sql
-- The graphs with a limit (workers claim their jobs with claim_limited; see ledger.ts).
-- Params: none
-- Returns: graph.
SELECT graph FROM graph_limits;
