-- insert_cron.sql
-- Stores a cron definition; its first firing is the first scheduled time after now (computed by the caller).
-- Params: $1 cron_id, $2 tenant, $3 graph, $4 schedule, $5 timezone, $6 input (jsonb), $7 thread_id (null = new thread per firing),
--         $8 metadata (jsonb), $9 missed ('run-once' | 'skip'), $10 enabled, $11 next_fire_at
-- Returns: the row.
INSERT INTO crons (cron_id, tenant, graph, schedule, timezone, input, thread_id, metadata, missed, enabled, next_fire_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
RETURNING *;
