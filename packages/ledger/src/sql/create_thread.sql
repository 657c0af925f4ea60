-- create_thread.sql
-- Creates a LangGraph API thread for a tenant; the tenant's existing thread of that id is left as it is.
-- Params: $1 thread_id, $2 tenant, $3 metadata (jsonb)
-- Returns: the new row, none when the tenant has a thread of that id.
INSERT INTO langgraph_threads (thread_id, tenant, metadata)
VALUES ($1, $2, $3)
ON CONFLICT (tenant, thread_id) DO NOTHING
RETURNING thread_id, tenant, metadata, created_at, updated_at;
