-- get_job_annotations.sql
-- The columns added for the operator view, which the Job rows of other verbs leave out.
-- Params: $1 job_id
-- Returns: trace_context, pruned_at; no row when the job does not exist.
SELECT trace_context, pruned_at FROM jobs WHERE job_id = $1;
