-- find_open_job_of_thread.sql
-- Params: $1 tenant, $2 thread_id
-- Returns: the oldest unfinished job of the tenant's thread, if any.
SELECT job_id FROM jobs
 WHERE tenant = $1 AND thread_id = $2 AND status NOT IN ('completed', 'failed', 'cancelled')
 ORDER BY seq LIMIT 1;
