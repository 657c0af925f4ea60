-- count_orphan_checkpoint_threads.sql
-- LangGraph threads with checkpoints or pending writes but no admitted job (chaos audit, ARCHITECTURE.md, invariant 2).
-- A job's LangGraph thread is langgraph_thread_id(tenant, thread_id) (migration 0005); audit only, so no index for it.
-- Params: none
-- Returns: one row: count, sample (up to 5 thread ids).
WITH threads AS (
  SELECT thread_id FROM checkpoints
  UNION
  SELECT thread_id FROM checkpoint_writes
)
SELECT count(*)::bigint AS count, (array_agg(t.thread_id))[1:5] AS sample
  FROM threads t
 WHERE NOT EXISTS (SELECT 1 FROM jobs j WHERE langgraph_thread_id(j.tenant, j.thread_id) = t.thread_id);
