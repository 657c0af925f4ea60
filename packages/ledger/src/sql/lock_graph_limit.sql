-- lock_graph_limit.sql
-- Locks the rate limit of a job's graph for this transaction, so claims of a limited graph
-- take turns and each sees the ones before it (claim_limited in ledger.ts).
-- Params: $1 job_id
-- Returns: the graph_limits row of the job's graph, or none when the graph has no limit.
SELECT l.* FROM graph_limits l JOIN jobs j ON j.graph = l.graph WHERE j.job_id = $1 FOR UPDATE OF l;
