-- list_undelivered.sql
-- Jobs that should be in the queue and may not be: accepted or recovering, once due (run_after), with no
-- delivery recorded within the grace period, and free to run on their thread (the claim rule of
-- claim_lease.sql). A job whose thread is held waits without a delivery (wait_for_thread.sql):
-- listing it would deliver it again every grace period, only to be refused. It is listed once
-- its thread is free, should the job that freed it not have delivered it (crash, queue outage).
-- A job of a graph and version no live worker serves is skipped the same way
-- (wait_for_version.sql) and listed once a worker serving it is live (graph_version_deliverable).
-- The grace (a delivery just made may not be visible in the queue yet) counts from the last
-- delivery; a job due after it (a delayed job) is listed as soon as it is due, so one whose
-- delayed delivery was lost starts within a sweep of its due time, not a grace after acceptance.
-- The reconciler checks each against the queue, so a delayed delivery still there is left alone.
-- Params: $1 grace (ms), $2 batch size
-- Returns: job_id, deliveries, delivery_id, status, graph, tenant, thread_id, attempt (to label the delivery), priority.
SELECT job_id, deliveries, delivery_id, status, graph, tenant, thread_id, attempt, priority FROM jobs j
 WHERE status IN ('accepted', 'recovery_required') AND (run_after IS NULL OR run_after <= now())
   AND graph_version_deliverable(graph, graph_version)
   AND (coalesce(enqueued_at, accepted_at) < now() - make_interval(secs => $1::double precision / 1000)
        OR run_after > coalesce(enqueued_at, accepted_at))
   AND NOT EXISTS (SELECT 1 FROM thread_holder(j.tenant, j.thread_id, j.job_id, j.seq))
 ORDER BY seq LIMIT $2;
