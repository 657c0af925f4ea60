-- get_job.sql
-- Params: $1 job_id, $2 tenant (null = any)
-- Returns: the job row.
SELECT * FROM jobs WHERE job_id = $1 AND ($2::text IS NULL OR tenant = $2);
