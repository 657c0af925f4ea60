-- storage_stats.sql
-- Rows and on-disk bytes of the ledger's tables and LangGraph's checkpoint tables in the schema
-- on the search_path (the storage benchmark divides them by jobs run). Bytes are
-- pg_total_relation_size: heap, TOAST and every index.
-- Params: none
-- Returns: one row per table: table_name, row_count, total_bytes.
SELECT 'jobs' AS table_name, (SELECT count(*) FROM jobs)::bigint AS row_count, pg_total_relation_size('jobs'::regclass)::bigint AS total_bytes
UNION ALL
SELECT 'job_events', (SELECT count(*) FROM job_events), pg_total_relation_size('job_events'::regclass)
UNION ALL
SELECT 'effects', (SELECT count(*) FROM effects), pg_total_relation_size('effects'::regclass)
UNION ALL
SELECT 'checkpoints', (SELECT count(*) FROM checkpoints), pg_total_relation_size('checkpoints'::regclass)
UNION ALL
SELECT 'checkpoint_blobs', (SELECT count(*) FROM checkpoint_blobs), pg_total_relation_size('checkpoint_blobs'::regclass)
UNION ALL
SELECT 'checkpoint_writes', (SELECT count(*) FROM checkpoint_writes), pg_total_relation_size('checkpoint_writes'::regclass);
