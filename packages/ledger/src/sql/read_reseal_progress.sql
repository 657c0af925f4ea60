-- read_reseal_progress.sql
-- Where the re-seal stands in every table it walked (reseal.ts).
-- Params: none
-- Returns: one row per table (table_name, target_kid, position, walked, resealed, skipped, finished_at, updated_at).
SELECT * FROM reseal_progress ORDER BY table_name;
