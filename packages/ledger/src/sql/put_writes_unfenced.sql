-- put_writes_unfenced.sql
-- put_writes.sql without the fence: one task's pending writes as one statement, an existing
-- (checkpoint, task, idx) row kept, or replaced with `replace`. ThreadSaver's write, outside any run
-- (state updates); a run's writes always go through the fenced put_writes.sql.
-- Params: $1 thread_id, $2 checkpoint_ns, $3 checkpoint_id, $4 task_id, $5 idx int[],
--   $6 channels text[], $7 types text[], $8 blobs bytea[], $9 replace (boolean)
-- Returns: one row: `held`, always true (no fence).
WITH w AS (
  INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob)
  SELECT $1::text, $2::text, $3::text, $4::text, w.idx, w.channel, w.type, w.blob
    FROM unnest($5::int[], $6::text[], $7::text[], $8::bytea[]) AS w (idx, channel, type, blob)
  ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE
    SET channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob
    WHERE $9::boolean
)
SELECT true AS held;
