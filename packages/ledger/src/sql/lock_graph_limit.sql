-- lock_graph_limit.sql
-- Locks the rate limit of a job's graph for this transaction, so claims of a limited graph
-- take turns and each sees the ones before it (claimLimited in ledger.ts). The caller bounds
-- the wait (lock_timeout): the lease is measured from the transaction's start (now()), which a
-- long wait would leave behind; a timed-out lock (55P03) holds the job back for a while.
-- Params: $1 job_id
-- Returns: the graph_limits row of the job's graph, or none when the graph has no limit.
SELECT l.* FROM graph_limits l JOIN jobs j ON j.graph = l.graph WHERE j.job_id = $1 FOR UPDATE OF l;
