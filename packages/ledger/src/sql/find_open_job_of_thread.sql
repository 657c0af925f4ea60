-- find_open_job_of_thread.sql
-- Params: $1 thread_id
-- Returns: the oldest unfinished job of the thread, if any.
SELECT job_id FROM jobs
 WHERE thread_id = $1 AND status NOT IN ('completed', 'failed', 'cancelled')
 ORDER BY seq LIMIT 1;
