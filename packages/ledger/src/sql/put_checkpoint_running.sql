-- put_checkpoint_running.sql
-- put_checkpoint.sql for an attempt whose job this saver already saw running (an earlier put of
-- the same saver held its fence): the same fence, blobs and checkpoint, without the
-- starting → running move. That move is an UPDATE of `jobs`, which fires the statement-level
-- counting trigger (migration 0012) even when it changes no row; it cannot apply here (a
-- running job never goes back to starting under the same token), so it is left out.
-- It also carries the pending writes of tasks that finished just before this checkpoint
-- (FencedPostgresSaver holds plain task writes until the next put or the next turn of the event
-- loop): one transaction and one commit instead of one per task. Conflict rule of put_writes.sql
-- without `replace` (only plain writes are held): an existing (checkpoint, task, idx) row is kept.
-- Fence: the job row share-locked while this token holds the lease and the job is running, as
-- `held` in put_checkpoint.sql; otherwise nothing is written.
-- Params: $1–$12 as put_checkpoint.sql; then the held writes, one array element per row (empty
--   arrays: none): $13 thread_id text[], $14 checkpoint_ns text[], $15 checkpoint_id text[],
--   $16 task_id text[], $17 idx int[], $18 channel text[], $19 type text[], $20 blob bytea[]
-- Returns: one row: `held` (the fence held and everything was written).
WITH fence AS MATERIALIZED (
  SELECT job_id FROM jobs
   -- `(status …) IS TRUE` keeps the lookup on the key (docs/decisions/0005-cost-at-scale.md, "A job's own statements find it by key").
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
