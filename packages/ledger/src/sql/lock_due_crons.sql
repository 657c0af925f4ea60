-- lock_due_crons.sql
-- Enabled crons whose next firing is due (and not past their end_time), locked for this
-- transaction; crons another producer is firing right now are skipped (it advances them before
-- it commits).
-- Params: $1 batch size
-- Returns: the crons rows plus db_now (the database clock, which judges every firing).
SELECT c.*, now() AS db_now FROM crons c
 WHERE enabled AND next_fire_at <= now()
   AND (end_time IS NULL OR next_fire_at <= end_time)
 ORDER BY next_fire_at
 LIMIT $1
   FOR UPDATE SKIP LOCKED;
