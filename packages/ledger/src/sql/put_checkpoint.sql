-- put_checkpoint.sql
-- One checkpoint of a fenced attempt (FencedPostgresSaver.put) as one statement, so one round
-- trip and its own transaction: the fence, the attempt's first-checkpoint move, the channel
-- blobs and the checkpoint row commit together or not at all.
-- Fence: `moved` takes the job row starting → running (what record_checkpoint.sql does) and
-- `held` share-locks it while running; both need this token and a lease not yet expired by the
-- database clock (clock_timestamp()). They never touch the row twice: every CTE sees the
-- statement's one snapshot, where the row is either starting or running.
-- A newer claim that commits before the row lock is re-checked by READ COMMITTED on the newest
-- row version (token differs: no row, nothing written); a claim that comes later waits for
-- this statement's transaction and then sees the checkpoint. The blobs and the checkpoint are
-- written only WHERE EXISTS (fence), evaluated once, before their first row.
-- Params: $1 job_id, $2 fencing_token, $3 thread_id, $4 checkpoint_ns, $5 checkpoint_id,
--   $6 parent_checkpoint_id (null for none), $7 checkpoint (jsonb), $8 metadata (jsonb),
--   $9 channels text[], $10 versions text[], $11 types text[], $12 blobs bytea[] (null for 'empty')
-- Returns: one row: `held` (the fence held and everything was written), `raced` (it did not,
--   but the snapshot saw the job starting with this token: another transaction of this
--   attempt moved it meanwhile; run the statement again with a fresh snapshot).
WITH moved AS (
  UPDATE jobs SET status = 'running', first_checkpoint_at = coalesce(first_checkpoint_at, now()), updated_at = now()
   -- `(status …) IS TRUE` keeps the lookup on the key (docs/decisions/0005-cost-at-scale.md, "A job's own statements find it by key").
   WHERE job_id = $1 AND fencing_token = $2 AND (status = 'starting') IS TRUE AND lease_expires_at > clock_timestamp()
  RETURNING job_id, attempt, fencing_token, lease_owner
), held AS MATERIALIZED (
  SELECT job_id FROM jobs
   WHERE job_id = $1 AND fencing_token = $2 AND (status = 'running') IS TRUE AND lease_expires_at > clock_timestamp()
     FOR SHARE
), fence AS MATERIALIZED (
  SELECT job_id FROM moved UNION ALL SELECT job_id FROM held
), ev AS (
  INSERT INTO job_events (job_id, type, attempt, fencing_token, worker_id)
  SELECT job_id, 'checkpointed', attempt, fencing_token, lease_owner FROM moved
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
SELECT EXISTS (SELECT 1 FROM fence) AS held,
       coalesce((SELECT status = 'starting' AND lease_expires_at > clock_timestamp()
                   FROM jobs WHERE job_id = $1 AND fencing_token = $2), false) AS raced;
