-- list_jobs.sql
-- Newest first, keyset-paged on seq so deep pages stay fast.
-- Params: $1 tenant, $2 status, $3 graph, $4 thread_id (each null = any), $5 cursor seq (null = start), $6 limit
-- Returns: job rows.
SELECT * FROM jobs
 WHERE ($1::text IS NULL OR tenant = $1)
   AND ($2::text IS NULL OR status = $2)
   AND ($3::text IS NULL OR graph = $3)
   AND ($4::text IS NULL OR thread_id = $4)
   AND ($5::bigint IS NULL OR seq < $5)
 ORDER BY seq DESC LIMIT $6;
