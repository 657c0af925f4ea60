-- delete_run_checkpoints.sql
-- A rolled-back run's traces on its thread (LangGraph API rollback): the checkpoints it wrote
-- (FencedPostgresSaver tags each with metadata.runledger_job = its job id; state updates and other runs'
-- checkpoints carry none or another), their pending writes, the channel blobs that only they
-- reference, and its stream log. Run after the job was cancelled in the same transaction: the
-- cancel holds the job row, so no fenced write of it can land after this statement.
-- Params: $1 job_id
-- Returns: one row: checkpoints, writes, blobs, stream_events (rows deleted).
WITH job AS (
  SELECT langgraph_thread_id(tenant, thread_id) AS lg FROM jobs WHERE job_id = $1
), gone AS (
  DELETE FROM checkpoints c USING job
   WHERE c.thread_id = job.lg AND c.metadata->>'runledger_job' = $1
  RETURNING c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.checkpoint
), wr AS (
  DELETE FROM checkpoint_writes w USING gone g
   WHERE w.thread_id = g.thread_id AND w.checkpoint_ns = g.checkpoint_ns AND w.checkpoint_id = g.checkpoint_id
  RETURNING 1
), bl AS (
  DELETE FROM checkpoint_blobs b USING gone g, jsonb_each_text(g.checkpoint->'channel_versions') AS v (channel, version)
   WHERE b.thread_id = g.thread_id AND b.checkpoint_ns = g.checkpoint_ns AND b.channel = v.channel AND b.version = v.version
     AND NOT EXISTS (
       SELECT 1 FROM checkpoints k
        WHERE k.thread_id = b.thread_id AND k.checkpoint_ns = b.checkpoint_ns
          AND k.checkpoint->'channel_versions'->>b.channel = b.version
          AND k.checkpoint_id NOT IN (SELECT checkpoint_id FROM gone))
  RETURNING 1
), st AS (
  DELETE FROM run_stream_events WHERE job_id = $1 RETURNING 1
)
SELECT (SELECT count(*) FROM gone) AS checkpoints, (SELECT count(*) FROM wr) AS writes,
       (SELECT count(*) FROM bl) AS blobs, (SELECT count(*) FROM st) AS stream_events;
