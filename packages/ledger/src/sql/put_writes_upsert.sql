-- put_writes_upsert.sql
-- put_writes.sql for a call whose writes all go to the special channels of WRITES_IDX_MAP
-- (errors, interrupts, resume values): same conflict rule as PostgresSaver's
-- UPSERT_CHECKPOINT_WRITES_SQL, a newer write replaces the stored one. The caller passes each
-- key once (the last write of it), as one INSERT … ON CONFLICT DO UPDATE cannot touch a row twice.
-- Fence: as in put_writes.sql, the job row share-locked while this token holds the lease.
-- Params: $1 job_id, $2 fencing_token, $3 thread_id, $4 checkpoint_ns, $5 checkpoint_id,
--   $6 task_id, $7 idx int[], $8 channels text[], $9 types text[], $10 blobs bytea[]
-- Returns: one row: `held` (the fence held and the writes were applied).
WITH fence AS MATERIALIZED (
  SELECT job_id FROM jobs
   WHERE job_id = $1 AND fencing_token = $2 AND status IN ('starting', 'running')
     FOR SHARE
), w AS (
  INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob)
  SELECT $3::text, $4::text, $5::text, $6::text, w.idx, w.channel, w.type, w.blob
    FROM unnest($7::int[], $8::text[], $9::text[], $10::bytea[]) AS w (idx, channel, type, blob)
   WHERE EXISTS (SELECT 1 FROM fence)
  ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE
    SET channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob
)
SELECT EXISTS (SELECT 1 FROM fence) AS held;
