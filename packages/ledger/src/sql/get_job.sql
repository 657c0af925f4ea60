-- get_job.sql
-- Params: $1 job_id, $2 tenant (null = any)
-- Returns: the job row, plus blocked_by: while the job is accepted or recovery_required, the job
-- holding its thread (the claim rule of claim_lease.sql), else null; and version_served
-- (job_version_served, 0013): while it waits, whether a live worker serves its graph and version.
SELECT j.*,
       CASE WHEN j.status IN ('accepted', 'recovery_required') THEN
         (SELECT job_id FROM thread_holder(j.tenant, j.thread_id, j.job_id, j.seq))
       END AS blocked_by,
       job_version_served(j.status, j.graph, j.graph_version) AS version_served
  FROM jobs j WHERE j.job_id = $1 AND ($2::text IS NULL OR j.tenant = $2);
