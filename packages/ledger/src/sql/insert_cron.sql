-- insert_cron.sql
-- Stores a cron definition unless its tenant has $12 crons already (after lock_tenant_crons.sql,
-- in the same transaction); its first firing is the first scheduled time after now (computed by the caller).
-- Params: $1 cron_id, $2 tenant, $3 graph, $4 schedule, $5 timezone, $6 input (jsonb), $7 thread_id (null = new thread per firing),
--         $8 metadata (jsonb), $9 missed ('run-once' | 'skip'), $10 enabled, $11 next_fire_at, $12 most crons per tenant (null = no cap),
--         $13 assistant_id (a LangGraph API cron; null = a /v1 cron), $14 end_time (null = never ends)
-- Returns: the row, or none when the tenant is at the cap.
INSERT INTO crons (cron_id, tenant, graph, schedule, timezone, input, thread_id, metadata, missed, enabled, next_fire_at, assistant_id, end_time)
SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $13, $14
 WHERE $12::int IS NULL OR (SELECT count(*) FROM crons WHERE tenant = $2) < $12
RETURNING *;
