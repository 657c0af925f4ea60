-- save_reseal_progress.sql
-- Records the re-seal's position in one table after a batch (its own short transaction).
-- Params: $1 table_name, $2 target_kid, $3 position (jsonb key of the last row; NULL when finished),
--   $4 walked, $5 resealed, $6 skipped (totals of this run for the table), $7 finished (boolean)
-- Returns: nothing.
INSERT INTO reseal_progress AS p (table_name, target_kid, position, walked, resealed, skipped, finished_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $7 THEN now() END, now())
ON CONFLICT (table_name) DO UPDATE
   SET target_kid = EXCLUDED.target_kid, position = EXCLUDED.position, walked = EXCLUDED.walked,
       resealed = EXCLUDED.resealed, skipped = EXCLUDED.skipped, finished_at = EXCLUDED.finished_at, updated_at = now();
