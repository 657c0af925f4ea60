-- 0013_job_version_served.sql
-- The `version_served` of a job row, once for every statement that returns jobs (get_job.sql,
-- list_jobs.sql, operator_transition.sql): while the job waits (accepted, recovery_required,
-- interrupted), whether a live worker serves its graph and version (graph_version_served of
-- 0009); null in every other state. A scalar SQL function without SET or SECURITY DEFINER, so
-- PostgreSQL inlines it into the calling statement. Append-only like 0001–0012; adds a function only.
CREATE FUNCTION job_version_served(status text, graph text, version text) RETURNS boolean
  LANGUAGE sql STABLE
  AS $$ SELECT CASE WHEN status IN ('accepted', 'recovery_required', 'interrupted') THEN graph_version_served(graph, version) END $$;
