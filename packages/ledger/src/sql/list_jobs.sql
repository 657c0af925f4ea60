-- list_jobs.sql
-- Newest first, keyset-paged on seq so deep pages stay fast.
-- Params: $1 tenant, $2 status, $3 graph, $4 thread_id (each null = any), $5 cursor seq (null = start), $6 limit
-- Returns: job rows, each with blocked_by and version_served as in get_job.sql.
-- The page's seqs come first, from the index that leads with the filtered columns and ends in
-- seq (jobs_tenant_seq, jobs_status_seq, jobs_graph_seq, jobs_tenant_status_seq,
-- jobs_tenant_graph_seq, jobs_thread_seq), read backwards for exactly one page. With plain
-- `graph = $3 ORDER BY seq DESC` the planner may walk jobs_seq_key backwards and filter
-- instead: it assumes a graph's rows are spread evenly over seq, so a graph idle since a
-- million newer jobs cost a scan of all of them (1M jobs: 20,441 rows read for a page of 50).
-- To leave it no such choice, the sort key starts with the filtered columns (only their index
-- gives that order) and the filters are written as ranges, not `=`, because an `=` makes a
-- column constant and drops it from the sort key. This needs the planner to see the parameters:
-- the statement stays unnamed (planned per call), where the CASEs fold. status with graph, and
-- tenant, status and graph, go by the status index and filter on graph.
SELECT j.*,
       CASE WHEN j.status IN ('accepted', 'recovery_required') THEN
         (SELECT job_id FROM thread_holder(j.tenant, j.thread_id, j.job_id, j.seq))
       END AS blocked_by,
       job_version_served(j.status, j.graph, j.graph_version) AS version_served
  FROM jobs j
 WHERE j.seq IN (
   SELECT seq FROM jobs
    WHERE ($1::text IS NULL OR tenant BETWEEN $1 AND $1)
      AND ($2::text IS NULL OR status BETWEEN $2 AND $2)
      AND ($3::text IS NULL OR graph BETWEEN $3 AND $3)
      AND ($4::text IS NULL OR thread_id = $4)
      AND ($5::bigint IS NULL OR seq < $5)
    ORDER BY CASE WHEN $1::text IS NOT NULL THEN tenant END DESC,
             CASE WHEN $4::text IS NULL AND $2::text IS NOT NULL THEN status END DESC,
             CASE WHEN $4::text IS NULL AND $2::text IS NULL AND $3::text IS NOT NULL THEN graph END DESC,
             seq DESC
    LIMIT $6)
 ORDER BY j.seq DESC;
