-- create_thread.sql
-- Creates a LangGraph API thread for a tenant; an existing id is left as it is.
-- Params: $1 thread_id, $2 tenant, $3 metadata (jsonb)
-- Returns: the new row, none when the id exists.
INSERT INTO langgraph_threads (thread_id, tenant, metadata)
VALUES ($1, $2, $3)
ON CONFLICT (thread_id) DO NOTHING
RETURNING thread_id, tenant, metadata, created_at, updated_at;
