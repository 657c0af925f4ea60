-- count_threads.sql
-- How many of a tenant's threads match (the filters of search_threads.sql).
-- Params: $1 tenant (null = every tenant), $2 metadata that must be contained (jsonb, null = any),
--   $3 latest job statuses (text[], 'none' = no job; null = any)
-- Returns: one row, n.
SELECT count(*)::int AS n
  FROM langgraph_threads t
  LEFT JOIN LATERAL (
        SELECT status FROM jobs
         WHERE jobs.tenant = t.tenant AND jobs.thread_id = t.thread_id ORDER BY seq DESC LIMIT 1) j ON true
 WHERE ($1::text IS NULL OR t.tenant = $1)
   AND ($2::jsonb IS NULL OR t.metadata @> $2)
   AND ($3::text[] IS NULL OR coalesce(j.status, 'none') = ANY ($3));
