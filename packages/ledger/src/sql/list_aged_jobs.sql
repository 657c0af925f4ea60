-- list_aged_jobs.sql
-- Prioritized jobs that have waited longer than the aging bound (the reconciler's aging pass):
-- accepted or recovering, priority above 0, whose wait started more than $1 ms ago. A wait starts
-- at the job's latest delivery (admission, redelivery, hand-off of its thread, resume) or at its
-- due time, whichever is later, so time spent parked, waiting for its thread or not yet due does
-- not count. Oldest jobs first.
-- Params: $1 aging bound (ms), $2 batch size
-- Returns: job_id, delivery_id (the delivery to raise in the queue), priority.
SELECT job_id, delivery_id, priority FROM jobs
 WHERE status IN ('accepted', 'recovery_required') AND priority > 0
   AND greatest(coalesce(enqueued_at, accepted_at), run_after) < now() - make_interval(secs => $1::double precision / 1000)
 ORDER BY seq LIMIT $2;
