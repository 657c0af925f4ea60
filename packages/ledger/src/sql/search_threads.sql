-- search_threads.sql
-- A tenant's threads, in the order asked (default newest first), each with its latest job (status and graph).
-- Params: $1 tenant (null = every tenant), $2 thread ids (text[], null = any), $3 metadata that
--   must be contained (jsonb, null = any), $4 latest job statuses (text[], 'none' = no job; null =
--   any), $5 limit, $6 offset, $7 sort key ('created_at' | 'updated_at' | 'thread_id' | 'status'),
--   $8 sort order ('asc' | 'desc')
-- Returns: thread rows with job_id, job_status, job_graph (null without a job).
-- 'status' sorts by the LangGraph API's thread status (idle, busy, interrupted, error) of the latest job.
SELECT t.thread_id, t.tenant, t.metadata, t.created_at, t.updated_at,
       j.job_id, j.status AS job_status, j.graph AS job_graph, j.updated_at AS job_updated_at
  FROM langgraph_threads t
  LEFT JOIN LATERAL (
        SELECT job_id, status, graph, updated_at FROM jobs
         WHERE jobs.tenant = t.tenant AND jobs.thread_id = t.thread_id ORDER BY seq DESC LIMIT 1) j ON true
  CROSS JOIN LATERAL (SELECT
        greatest(t.updated_at, j.updated_at) AS updated_at,
        CASE WHEN j.status IN ('accepted', 'recovery_required', 'starting', 'running') THEN 'busy'
             WHEN j.status = 'interrupted' THEN 'interrupted'
             WHEN j.status IN ('failed', 'manual_reconcile') THEN 'error'
             ELSE 'idle' END AS status) k
 WHERE ($1::text IS NULL OR t.tenant = $1)
   AND ($2::text[] IS NULL OR t.thread_id = ANY ($2))
   AND ($3::jsonb IS NULL OR t.metadata @> $3)
   AND ($4::text[] IS NULL OR coalesce(j.status, 'none') = ANY ($4))
 ORDER BY
   CASE WHEN $8 = 'asc' AND $7 = 'created_at' THEN t.created_at END ASC,
   CASE WHEN $8 = 'desc' AND $7 = 'created_at' THEN t.created_at END DESC,
   CASE WHEN $8 = 'asc' AND $7 = 'updated_at' THEN k.updated_at END ASC,
   CASE WHEN $8 = 'desc' AND $7 = 'updated_at' THEN k.updated_at END DESC,
   CASE WHEN $8 = 'asc' AND $7 = 'status' THEN k.status END ASC,
   CASE WHEN $8 = 'desc' AND $7 = 'status' THEN k.status END DESC,
   CASE WHEN $8 = 'asc' THEN t.thread_id END ASC,
   CASE WHEN $8 = 'desc' THEN t.thread_id END DESC,
   t.created_at DESC, t.thread_id
 LIMIT $5 OFFSET $6;
