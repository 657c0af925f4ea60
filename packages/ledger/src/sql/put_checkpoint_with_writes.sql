-- put_checkpoint_with_writes.sql
-- put_checkpoint_running.sql plus the pending writes of tasks that finished just before this
-- checkpoint (FencedPostgresSaver holds plain task writes until the next put or the next turn of
-- the event loop): one statement, one transaction, one commit instead of one per task.
-- Conflict rule of put_writes.sql without `replace` (only plain writes are held): an existing
-- (checkpoint, task, idx) row is kept; the caller passes each key once.
-- Fence: as put_checkpoint_running.sql; nothing is written when it does not hold.
-- Params: $1–$12 as put_checkpoint.sql; then the writes, one array element per row:
--   $13 thread_id text[], $14 checkpoint_ns text[], $15 checkpoint_id text[], $16 task_id text[],
--   $17 idx int[], $18 channel text[], $19 type text[], $20 blob bytea[]
-- Returns: one row: `held` (the fence held and everything was written).
WITH fence AS MATERIALIZED (
  SELECT job_id FROM jobs
   -- `(status …) IS TRUE` keeps the lookup on the key (ARCHITECTURE.md, "A job's own statements find it by key").
   WHERE job_id = $1 AND fencing_token = $2 AND (status = 'running') IS TRUE AND lease_expires_at > clock_timestamp()
     FOR SHARE
), w AS (
  INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob)
  SELECT w.thread_id, w.checkpoint_ns, w.checkpoint_id, w.task_id, w.idx, w.channel, w.type, w.blob
    FROM unnest($13::text[], $14::text[], $15::text[], $16::text[], $17::int[], $18::text[], $19::text[], $20::bytea[])
      AS w (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob)
   WHERE EXISTS (SELECT 1 FROM fence)
  ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO NOTHING
), blobs AS (
  INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
  SELECT $3::text, $4::text, b.channel, b.version, b.type, b.blob
    FROM unnest($9::text[], $10::text[], $11::text[], $12::bytea[]) AS b (channel, version, type, blob)
   WHERE EXISTS (SELECT 1 FROM fence)
  ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING
), cp AS (
  INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
  SELECT $3::text, $4::text, $5::text, $6::text, $7::jsonb, $8::jsonb
   WHERE EXISTS (SELECT 1 FROM fence)
  ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata
)
SELECT EXISTS (SELECT 1 FROM fence) AS held;
