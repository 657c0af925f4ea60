-- record_trace_context.sql
-- Stores the admission's trace context (W3C traceparent) so the job's attempts join its trace.
-- Written once: a later admission with the same idempotency key keeps the first trace.
-- Params: $1 job_id, $2 traceparent
-- Returns: one row when stored.
UPDATE jobs SET trace_context = $2 WHERE job_id = $1 AND trace_context IS NULL RETURNING job_id;
