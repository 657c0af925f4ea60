-- list_undelivered.sql
-- Jobs that should be in the queue and may not be: accepted or due for recovery, with no
-- delivery recorded within the grace period. The reconciler checks each against the queue.
-- Params: $1 grace (ms), $2 batch size
-- Returns: job_id, deliveries, delivery_id, status.
SELECT job_id, deliveries, delivery_id, status FROM jobs
 WHERE (status = 'accepted' OR (status = 'recovery_required' AND (run_after IS NULL OR run_after <= now())))
   AND coalesce(enqueued_at, accepted_at) < now() - make_interval(secs => $1::double precision / 1000)
 ORDER BY seq LIMIT $2;
