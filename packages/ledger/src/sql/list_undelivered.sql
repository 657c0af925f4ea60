-- list_undelivered.sql
-- Jobs that should be in the queue and may not be: accepted or due for recovery, with no
-- delivery recorded within the grace period, and free to run on their thread (the claim rule of
-- claim_lease.sql). A job whose thread is held waits without a delivery (wait_for_thread.sql):
-- listing it would deliver it again every grace period, only to be refused. It is listed once
-- its thread is free, should the job that freed it not have delivered it (crash, queue outage).
-- A job of a graph and version no live worker serves is skipped the same way
-- (wait_for_version.sql) and listed once a worker serving it is live (graph_version_deliverable).
-- The reconciler checks each against the queue.
-- Params: $1 grace (ms), $2 batch size
-- Returns: job_id, deliveries, delivery_id, status, and graph, tenant, thread_id, attempt (to label the delivery).
SELECT job_id, deliveries, delivery_id, status, graph, tenant, thread_id, attempt FROM jobs j
 WHERE (status = 'accepted' OR (status = 'recovery_required' AND (run_after IS NULL OR run_after <= now())))
   AND graph_version_deliverable(graph, graph_version)
   AND coalesce(enqueued_at, accepted_at) < now() - make_interval(secs => $1::double precision / 1000)
   AND NOT EXISTS (
     SELECT 1 FROM jobs o
      WHERE o.tenant = j.tenant AND o.thread_id = j.thread_id AND o.job_id <> j.job_id
        AND ((o.seq < j.seq AND o.status NOT IN ('completed', 'failed', 'cancelled'))
             OR o.status IN ('starting', 'running')))
 ORDER BY seq LIMIT $2;
