-- delete_pruned_jobs.sql
-- Retention with RETENTION_JOBS=delete: removes up to $1 job rows that prune_finished_threads.sql
-- marked pruned (terminal, on a thread whose every job finished before the cutoff), oldest mark
-- first, with their effects, stream log (run_stream_events) and webhook deliveries. A job with a
-- webhook delivery still pending stays (the dispatcher reads the job row to send it) until the
-- delivery is sent or given up. With $2 <> 'none' (checkpoints kept) the thread's latest job
-- stays too: a thread's state is read through the graph of its latest job, so the checkpoints
-- kept stay readable. Events stay: job_events leaves by whole day partitions only
-- (drop_job_event_partitions.sql). Rows are found through jobs_pruned (0026) and each table's key
-- (= ANY of the batch's ids, so the planner cannot choose a scan); effects and webhook
-- deliveries would go by their foreign key's cascade, and are deleted here to be counted.
-- Serialised with pruning by the same transaction advisory lock (a caller that does not get it
-- removes nothing and reports locked = false).
-- Params: $1 most jobs removed, $2 checkpoints kept: 'none' | 'last' | 'all'
-- Returns: one row: locked, jobs, effects, stream_events, webhook_deliveries.
WITH lock AS (
  SELECT pg_try_advisory_xact_lock(hashtextextended('runledger.retention', 0)) AS ok
), doomed AS (
  SELECT j.job_id FROM jobs j
   WHERE (SELECT ok FROM lock)
     AND j.pruned_at IS NOT NULL AND j.status IN ('completed', 'failed', 'cancelled')
     AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.job_id = j.job_id AND d.state = 'pending')
     AND ($2::text = 'none' OR EXISTS (
           SELECT 1 FROM jobs n WHERE n.thread_id = j.thread_id AND n.tenant = j.tenant AND n.seq > j.seq))
   ORDER BY j.pruned_at
   LIMIT $1
   FOR UPDATE OF j SKIP LOCKED
), ef AS (
  DELETE FROM effects WHERE job_id = ANY (ARRAY(SELECT job_id FROM doomed)) RETURNING 1
), st AS (
  DELETE FROM run_stream_events WHERE job_id = ANY (ARRAY(SELECT job_id FROM doomed)) RETURNING 1
), wh AS (
  DELETE FROM webhook_deliveries WHERE job_id = ANY (ARRAY(SELECT job_id FROM doomed)) RETURNING 1
), gone AS (
  DELETE FROM jobs WHERE job_id = ANY (ARRAY(SELECT job_id FROM doomed)) RETURNING 1
)
SELECT (SELECT ok FROM lock) AS locked,
       (SELECT count(*) FROM gone)::bigint AS jobs,
       (SELECT count(*) FROM ef)::bigint AS effects,
       (SELECT count(*) FROM st)::bigint AS stream_events,
       (SELECT count(*) FROM wh)::bigint AS webhook_deliveries;
