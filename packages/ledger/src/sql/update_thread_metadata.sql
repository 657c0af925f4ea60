-- update_thread_metadata.sql
-- Merges metadata into a tenant's thread.
-- Params: $1 thread_id, $2 tenant (null = any), $3 metadata to merge (jsonb)
-- Returns: the updated row, none when the thread is missing or another tenant's.
UPDATE langgraph_threads
   SET metadata = metadata || $3, updated_at = now()
 WHERE thread_id = $1 AND ($2::text IS NULL OR tenant = $2)
RETURNING thread_id, tenant, metadata, created_at, updated_at;
