-- next_job_of_thread.sql
-- The job whose turn it is on a thread, when it waits for a delivery: the earliest unfinished
-- job, if it is accepted or recovering and due (run_after). None when the thread is held (leased, parked,
-- not due) or has nothing left. Uses jobs_thread_open.
-- Params: $1 tenant, $2 thread_id (a thread is per tenant)
-- Returns: job_id, deliveries, delivery_id, graph, thread_id, attempt (to label the delivery), priority.
SELECT job_id, deliveries, delivery_id, graph, thread_id, attempt, priority FROM (
  SELECT job_id, status, run_after, deliveries, delivery_id, graph, thread_id, attempt, priority FROM jobs
   WHERE tenant = $1 AND thread_id = $2 AND status NOT IN ('completed', 'failed', 'cancelled')
   ORDER BY seq LIMIT 1
) AS first_open
 WHERE status IN ('accepted', 'recovery_required') AND (run_after IS NULL OR run_after <= now());
