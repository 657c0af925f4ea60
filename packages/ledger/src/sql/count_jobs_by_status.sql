-- count_jobs_by_status.sql
-- Params: $1 tenant (null = any)
-- Returns: status, count.
SELECT status, count(*)::bigint AS count FROM jobs WHERE ($1::text IS NULL OR tenant = $1) GROUP BY status;
