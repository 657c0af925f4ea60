-- put_checkpoint_running.sql
-- put_checkpoint.sql for an attempt whose job this saver already saw running (an earlier put of
-- the same saver held its fence): the same fence, blobs and checkpoint, without the
-- starting → running move. That move is an UPDATE of `jobs`, which fires the statement-level
-- counting trigger (migration 0012) even when it changes no row; it cannot apply here (a
-- running job never goes back to starting under the same token), so it is left out.
-- Fence: the job row share-locked while this token holds the lease and the job is running, as
-- `held` in put_checkpoint.sql; otherwise nothing is written.
-- Params: as put_checkpoint.sql.
-- Returns: one row: `held` (the fence held and everything was written).
WITH fence AS MATERIALIZED (
  SELECT job_id FROM jobs
   -- `(status …) IS TRUE` keeps the lookup on the key (ARCHITECTURE.md, "A job's own statements find it by key").
   WHERE job_id = $1 AND fencing_token = $2 AND (status = 'running') IS TRUE AND lease_expires_at > clock_timestamp()
     FOR SHARE
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
