-- list_jobs.sql
-- Newest first, keyset-paged on seq so deep pages stay fast.
-- Params: $1 tenant, $2 status, $3 graph, $4 thread_id (each null = any), $5 cursor seq (null = start), $6 limit
-- Returns: job rows, each with blocked_by and version_served as in get_job.sql.
SELECT j.*,
       CASE WHEN j.status IN ('accepted', 'recovery_required') THEN
         (SELECT job_id FROM thread_holder(j.tenant, j.thread_id, j.job_id, j.seq))
       END AS blocked_by,
       job_version_served(j.status, j.graph, j.graph_version) AS version_served
  FROM jobs j
 WHERE ($1::text IS NULL OR j.tenant = $1)
   AND ($2::text IS NULL OR j.status = $2)
   AND ($3::text IS NULL OR j.graph = $3)
   AND ($4::text IS NULL OR j.thread_id = $4)
   AND ($5::bigint IS NULL OR j.seq < $5)
 ORDER BY j.seq DESC LIMIT $6;
