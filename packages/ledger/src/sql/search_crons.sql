-- search_crons.sql
-- A tenant's crons filtered and ordered as the LangGraph API's cron search asks.
-- Params: $1 tenant (null = every tenant), $2 assistant_id (null = any), $3 thread_id (null = any),
--   $4 enabled (null = any), $5 only LangGraph API crons (assistant_id set), $6 limit, $7 offset,
--   $8 sort key ('cron_id' | 'assistant_id' | 'thread_id' | 'created_at' | 'updated_at' | 'next_run_date'),
--   $9 sort order ('asc' | 'desc')
-- Returns: crons rows.
SELECT * FROM crons
 WHERE ($1::text IS NULL OR tenant = $1)
   AND ($2::text IS NULL OR assistant_id = $2)
   AND ($3::text IS NULL OR thread_id = $3)
   AND ($4::boolean IS NULL OR enabled = $4)
   AND (NOT $5::boolean OR assistant_id IS NOT NULL)
 ORDER BY
   CASE WHEN $9 = 'asc' AND $8 = 'cron_id' THEN cron_id END ASC,
   CASE WHEN $9 = 'desc' AND $8 = 'cron_id' THEN cron_id END DESC,
   CASE WHEN $9 = 'asc' AND $8 = 'assistant_id' THEN assistant_id END ASC,
   CASE WHEN $9 = 'desc' AND $8 = 'assistant_id' THEN assistant_id END DESC,
   CASE WHEN $9 = 'asc' AND $8 = 'thread_id' THEN thread_id END ASC,
   CASE WHEN $9 = 'desc' AND $8 = 'thread_id' THEN thread_id END DESC,
   CASE WHEN $9 = 'asc' AND $8 = 'created_at' THEN created_at END ASC,
   CASE WHEN $9 = 'desc' AND $8 = 'created_at' THEN created_at END DESC,
   CASE WHEN $9 = 'asc' AND $8 = 'updated_at' THEN updated_at END ASC,
   CASE WHEN $9 = 'desc' AND $8 = 'updated_at' THEN updated_at END DESC,
   CASE WHEN $9 = 'asc' AND $8 = 'next_run_date' THEN next_fire_at END ASC,
   CASE WHEN $9 = 'desc' AND $8 = 'next_run_date' THEN next_fire_at END DESC,
   created_at DESC, cron_id
 LIMIT $6 OFFSET $7;
