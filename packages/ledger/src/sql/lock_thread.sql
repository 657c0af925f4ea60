-- lock_thread.sql
-- Serialises admissions that check a tenant's thread (multitask "reject") until the transaction
-- ends. Keyed by the LangGraph thread id, which is unique per (tenant, thread_id).
-- Params: $1 tenant, $2 thread_id
SELECT pg_advisory_xact_lock(hashtextextended('runledger.thread:' || langgraph_thread_id($1, $2), 0));
