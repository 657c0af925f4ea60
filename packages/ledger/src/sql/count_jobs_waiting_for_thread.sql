-- count_jobs_waiting_for_thread.sql
-- Jobs ready to run but for their thread: accepted or recovery_required while another job holds
-- the thread (the claim rule of claim_lease.sql).
-- Params: $1 tenant (null = any)
-- Returns: count.
SELECT count(*)::bigint AS count FROM jobs j
 WHERE j.status IN ('accepted', 'recovery_required') AND ($1::text IS NULL OR j.tenant = $1)
   AND EXISTS (
     SELECT 1 FROM jobs o
      WHERE o.tenant = j.tenant AND o.thread_id = j.thread_id AND o.job_id <> j.job_id
        AND ((o.seq < j.seq AND o.status NOT IN ('completed', 'failed', 'cancelled'))
             OR o.status IN ('starting', 'running')));
