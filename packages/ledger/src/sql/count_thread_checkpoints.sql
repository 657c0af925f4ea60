-- count_thread_checkpoints.sql
-- The tenant's thread's LangGraph checkpoints in the root namespace: how many (`runledger doctor`,
-- countThreadCheckpoints) and the latest id (the dashboard's job page). Checkpoint ids are
-- time-ordered (uuid v6), so the greatest is the latest. Uses the checkpoints primary key
-- (thread_id, checkpoint_ns, checkpoint_id).
-- Params: $1 tenant, $2 thread_id
-- Returns: one row: count, latest_id (null when the thread has none).
SELECT count(*)::bigint AS count, max(checkpoint_id) AS latest_id
  FROM checkpoints
 WHERE thread_id = langgraph_thread_id($1, $2) AND checkpoint_ns = '';
