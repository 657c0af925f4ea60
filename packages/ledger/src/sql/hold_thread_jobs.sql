-- hold_thread_jobs.sql
-- Inside a thread-state write's transaction, after lock_thread.sql: share-locks the tenant's
-- thread's unfinished jobs until the transaction ends, so none of them can be claimed, resumed
-- or cancelled while the state changes under it, and lists them for the caller to judge (a
-- parked `interrupted` job holds no lease; any other unfinished job holds or awaits the thread).
-- Params: $1 tenant, $2 thread_id
-- Returns: job_id, status of each unfinished job, oldest first.
SELECT job_id, status FROM jobs
 WHERE tenant = $1 AND thread_id = $2 AND status NOT IN ('completed', 'failed', 'cancelled')
 ORDER BY seq
   FOR SHARE;
