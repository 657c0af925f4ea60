-- delete_thread.sql
-- Deletes a LangGraph API thread of a tenant with its LangGraph checkpoints (checkpoints,
-- checkpoint_blobs, checkpoint_writes, under its LangGraph thread id langgraph_thread_id(tenant,
-- thread_id)), unless one of its jobs is still open. Job rows (the
-- permanent receipts), their events and effects stay.
-- Params: $1 thread_id, $2 tenant (null = any)
-- Returns: one row: deleted (the thread existed for the tenant and went), open_job (a job that is still open, or null).
WITH open_job AS (
  SELECT job_id FROM jobs
   WHERE thread_id = $1 AND ($2::text IS NULL OR tenant = $2) AND status NOT IN ('completed', 'failed', 'cancelled')
   ORDER BY seq LIMIT 1
), gone AS (
  DELETE FROM langgraph_threads
   WHERE thread_id = $1 AND ($2::text IS NULL OR tenant = $2) AND NOT EXISTS (SELECT 1 FROM open_job)
  RETURNING langgraph_thread_id(tenant, thread_id) AS checkpoint_thread
), cp AS (
  DELETE FROM checkpoints c USING gone g WHERE c.thread_id = g.checkpoint_thread RETURNING 1
), bl AS (
  DELETE FROM checkpoint_blobs b USING gone g WHERE b.thread_id = g.checkpoint_thread RETURNING 1
), wr AS (
  DELETE FROM checkpoint_writes w USING gone g WHERE w.thread_id = g.checkpoint_thread RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM gone) AS deleted,
       (SELECT job_id FROM open_job) AS open_job,
       (SELECT count(*) FROM cp) + (SELECT count(*) FROM bl) + (SELECT count(*) FROM wr) AS checkpoint_rows;
