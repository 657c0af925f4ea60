-- prune_finished_threads.sql
-- Retention: for up to $2 threads (tenant, thread_id) whose every job is terminal and finished before
-- now() - $1 days, removes the LangGraph checkpoints (checkpoints, checkpoint_blobs,
-- checkpoint_writes) and the jobs' timelines (job_events), and marks the jobs pruned. Job rows
-- and effects stay: a job row is the permanent idempotency receipt. A thread with any job that
-- is not terminal, or finished more recently, is not touched. One statement, so the thread
-- check and the deletes share one snapshot; concurrent callers are serialised by a transaction
-- advisory lock (a caller that does not get it removes nothing and reports locked = false).
-- Params: $1 age in days (double precision), $2 most candidate jobs examined in this batch
-- Returns: one row: locked, threads, jobs, checkpoints, checkpoint_blobs, checkpoint_writes, job_events.
WITH lock AS (
  SELECT pg_try_advisory_xact_lock(hashtextextended('runledger.retention', 0)) AS ok
), cutoff AS (
  SELECT now() - make_interval(secs => $1::double precision * 86400) AS at
), candidates AS (
  SELECT j.tenant, j.thread_id
    FROM jobs j, cutoff
   WHERE (SELECT ok FROM lock)
     AND j.pruned_at IS NULL AND j.completed_at IS NOT NULL AND j.completed_at < cutoff.at
     AND NOT EXISTS (
       SELECT 1 FROM jobs o
        WHERE o.tenant = j.tenant AND o.thread_id = j.thread_id
          AND (o.status NOT IN ('completed', 'failed', 'cancelled') OR o.completed_at IS NULL OR o.completed_at >= cutoff.at))
   ORDER BY j.completed_at
   LIMIT $2
), threads AS (
  SELECT DISTINCT tenant, thread_id, langgraph_thread_id(tenant, thread_id) AS checkpoint_thread FROM candidates
), cp AS (
  DELETE FROM checkpoints c USING threads t WHERE c.thread_id = t.checkpoint_thread RETURNING 1
), bl AS (
  DELETE FROM checkpoint_blobs b USING threads t WHERE b.thread_id = t.checkpoint_thread RETURNING 1
), wr AS (
  DELETE FROM checkpoint_writes w USING threads t WHERE w.thread_id = t.checkpoint_thread RETURNING 1
), ev AS (
  DELETE FROM job_events e USING jobs j, threads t WHERE j.tenant = t.tenant AND j.thread_id = t.thread_id AND e.job_id = j.job_id RETURNING 1
), marked AS (
  UPDATE jobs j SET pruned_at = now() FROM threads t WHERE j.tenant = t.tenant AND j.thread_id = t.thread_id RETURNING 1
)
SELECT (SELECT ok FROM lock) AS locked,
       (SELECT count(*) FROM threads)::bigint AS threads,
       (SELECT count(*) FROM marked)::bigint AS jobs,
       (SELECT count(*) FROM cp)::bigint AS checkpoints,
       (SELECT count(*) FROM bl)::bigint AS checkpoint_blobs,
       (SELECT count(*) FROM wr)::bigint AS checkpoint_writes,
       (SELECT count(*) FROM ev)::bigint AS job_events;
