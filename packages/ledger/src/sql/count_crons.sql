-- count_crons.sql
-- How many of a tenant's crons match (the filters of search_crons.sql).
-- Params: $1 tenant (null = every tenant), $2 assistant_id (null = any), $3 thread_id (null = any),
--   $4 enabled (null = any), $5 only LangGraph API crons (assistant_id set)
-- Returns: n.
SELECT count(*)::int AS n FROM crons
 WHERE ($1::text IS NULL OR tenant = $1)
   AND ($2::text IS NULL OR assistant_id = $2)
   AND ($3::text IS NULL OR thread_id = $3)
   AND ($4::boolean IS NULL OR enabled = $4)
   AND (NOT $5::boolean OR assistant_id IS NOT NULL);
