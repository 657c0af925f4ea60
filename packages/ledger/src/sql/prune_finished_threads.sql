-- prune_finished_threads.sql
-- Retention: for up to $2 threads (tenant, thread_id) whose every job is terminal and finished before
-- now() - $1 days, removes the LangGraph checkpoints (checkpoints, checkpoint_blobs,
-- checkpoint_writes) — all of them ($3 = 'none'), all but the latest checkpoint of each
-- namespace with the blobs and pending writes it refers to ($3 = 'last'), or none ($3 = 'all') —
-- and marks the jobs pruned. The timeline (job_events) leaves by whole day partitions instead
-- (drop_job_event_partitions.sql). Job rows and effects stay here: delete_pruned_jobs.sql removes
-- the marked ones when retention deletes jobs (RETENTION_JOBS=delete). A thread with any job that
-- is not terminal, or finished more recently, is not touched. One statement, so the thread
-- check and the deletes share one snapshot; concurrent callers are serialised by a transaction
-- advisory lock (a caller that does not get it removes nothing and reports locked = false).
-- Params: $1 age in days (double precision), $2 most candidate jobs examined in this batch,
--         $3 checkpoints kept: 'none' | 'last' | 'all'
-- Returns: one row: locked, threads, jobs, checkpoints, checkpoint_blobs, checkpoint_writes.
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
-- The rows to delete, found from the batch's threads through each table's primary key (a
-- LATERAL subquery kept apart by OFFSET 0) and deleted by ctid. Written as plain DELETE … USING,
-- the planner may put the anti-join against the kept rows first and read the whole table (it
-- did at 1M jobs: 15 s per batch of 500 threads). With $3 = 'last' a row stays when it belongs
-- to its namespace's latest checkpoint, found per row by one backward step on the primary key
-- (a CTE of the batch's latest checkpoints, scanned once per row, cost 0.15 s of CPU a batch).
), doomed_checkpoints AS (
  SELECT x.ctid AS row FROM threads t CROSS JOIN LATERAL (
    SELECT c.ctid FROM checkpoints c
     WHERE c.thread_id = t.checkpoint_thread
       AND ($3::text <> 'last' OR c.checkpoint_id IS DISTINCT FROM (
             SELECT max(m.checkpoint_id) FROM checkpoints m WHERE m.thread_id = c.thread_id AND m.checkpoint_ns = c.checkpoint_ns))
    OFFSET 0) x
   WHERE $3::text <> 'all'
), doomed_blobs AS (
  SELECT x.ctid AS row FROM threads t CROSS JOIN LATERAL (
    SELECT b.ctid FROM checkpoint_blobs b
     WHERE b.thread_id = t.checkpoint_thread
       AND ($3::text <> 'last' OR NOT EXISTS (
             SELECT 1 FROM checkpoints m
              WHERE m.thread_id = b.thread_id AND m.checkpoint_ns = b.checkpoint_ns
                AND m.checkpoint_id = (SELECT max(n.checkpoint_id) FROM checkpoints n WHERE n.thread_id = b.thread_id AND n.checkpoint_ns = b.checkpoint_ns)
                AND m.checkpoint -> 'channel_versions' ->> b.channel = b.version))
    OFFSET 0) x
   WHERE $3::text <> 'all'
), doomed_writes AS (
  SELECT x.ctid AS row FROM threads t CROSS JOIN LATERAL (
    SELECT w.ctid FROM checkpoint_writes w
     WHERE w.thread_id = t.checkpoint_thread
       AND ($3::text <> 'last' OR w.checkpoint_id IS DISTINCT FROM (
             SELECT max(m.checkpoint_id) FROM checkpoints m WHERE m.thread_id = w.thread_id AND m.checkpoint_ns = w.checkpoint_ns))
    OFFSET 0) x
   WHERE $3::text <> 'all'
), cp AS (
  DELETE FROM checkpoints WHERE ctid = ANY (ARRAY(SELECT row FROM doomed_checkpoints)) RETURNING 1
), bl AS (
  DELETE FROM checkpoint_blobs WHERE ctid = ANY (ARRAY(SELECT row FROM doomed_blobs)) RETURNING 1
), wr AS (
  DELETE FROM checkpoint_writes WHERE ctid = ANY (ARRAY(SELECT row FROM doomed_writes)) RETURNING 1
), marked AS (
  UPDATE jobs j SET pruned_at = now() FROM threads t WHERE j.tenant = t.tenant AND j.thread_id = t.thread_id RETURNING 1
)
SELECT (SELECT ok FROM lock) AS locked,
       (SELECT count(*) FROM threads)::bigint AS threads,
       (SELECT count(*) FROM marked)::bigint AS jobs,
       (SELECT count(*) FROM cp)::bigint AS checkpoints,
       (SELECT count(*) FROM bl)::bigint AS checkpoint_blobs,
       (SELECT count(*) FROM wr)::bigint AS checkpoint_writes;
