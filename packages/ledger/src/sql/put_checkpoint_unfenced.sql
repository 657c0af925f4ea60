-- put_checkpoint_unfenced.sql
-- put_checkpoint.sql without the fence: one checkpoint (channel blobs and checkpoint row) as one
-- statement. ThreadSaver's write: a thread's checkpoints written outside any run (state updates,
-- thread copies), where no job holds the thread; a run's checkpoints always go through the fenced
-- put_checkpoint.sql. bench/saver.ts also times it beside the fenced one (the fence's own cost).
-- Params: $1 thread_id, $2 checkpoint_ns, $3 checkpoint_id, $4 parent_checkpoint_id (null for
--   none), $5 checkpoint (jsonb), $6 metadata (jsonb), $7 channels text[], $8 versions text[],
--   $9 types text[], $10 blobs bytea[] (null for 'empty')
-- Returns: one row: `held`, always true (no fence).
WITH blobs AS (
  INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
  SELECT $1::text, $2::text, b.channel, b.version, b.type, b.blob
    FROM unnest($7::text[], $8::text[], $9::text[], $10::bytea[]) AS b (channel, version, type, blob)
  ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING
), cp AS (
  INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
  VALUES ($1::text, $2::text, $3::text, $4::text, $5::jsonb, $6::jsonb)
  ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata
)
SELECT true AS held;
