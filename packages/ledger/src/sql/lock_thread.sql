-- lock_thread.sql
-- Serialises admissions that check a thread (multitask "reject") until the transaction ends.
-- Params: $1 thread_id
SELECT pg_advisory_xact_lock(hashtextextended('runledger.thread:' || $1, 0));
