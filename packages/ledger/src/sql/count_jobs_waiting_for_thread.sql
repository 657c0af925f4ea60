-- count_jobs_waiting_for_thread.sql
-- Jobs ready to run but for their thread: accepted or recovery_required while another job holds
-- the thread (the claim rule of claim_lease.sql).
-- Params: $1 tenant (null = any)
-- Returns: count.
SELECT count(*)::bigint AS count FROM jobs j
 WHERE j.status IN ('accepted', 'recovery_required') AND ($1::text IS NULL OR j.tenant = $1)
   AND EXISTS (SELECT 1 FROM thread_holder(j.tenant, j.thread_id, j.job_id, j.seq));
