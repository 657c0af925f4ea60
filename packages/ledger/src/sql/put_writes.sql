-- put_writes.sql
-- One task's pending writes of a fenced attempt (FencedPostgresSaver.putWrites) as one
-- statement, so one round trip and its own transaction. Conflict rule as PostgresSaver's:
-- an existing (checkpoint, task, idx) row is kept (INSERT_CHECKPOINT_WRITES_SQL), or, with
-- `replace` (a call whose writes all go to WRITES_IDX_MAP's special channels: errors,
-- interrupts, resume values), replaced (UPSERT_CHECKPOINT_WRITES_SQL). The caller passes each
-- key once, as one INSERT … ON CONFLICT DO UPDATE cannot touch a row twice.
-- Fence: the job row share-locked while this token holds the lease (starting or running); a
-- newer claim that commits first is re-checked by READ COMMITTED on the newest row version
-- (token differs: no row, nothing written), one that comes later waits for this transaction.
-- The writes are inserted only WHERE EXISTS (fence), evaluated once, before their first row.
-- Params: $1 job_id, $2 fencing_token, $3 thread_id, $4 checkpoint_ns, $5 checkpoint_id,
--   $6 task_id, $7 idx int[], $8 channels text[], $9 types text[], $10 blobs bytea[],
--   $11 replace (boolean)
-- Returns: one row: `held` (the fence held and the writes were applied).
WITH fence AS MATERIALIZED (
  SELECT job_id FROM jobs
   -- `(status …) IS TRUE` keeps the lookup on the key (docs/decisions/0005-cost-at-scale.md, "A job's own statements find it by key").
   WHERE job_id = $1 AND fencing_token = $2 AND (status IN ('starting', 'running')) IS TRUE
     AND lease_expires_at > clock_timestamp()
     FOR SHARE
), w AS (
  INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob)
  SELECT $3::text, $4::text, $5::text, $6::text, w.idx, w.channel, w.type, w.blob
    FROM unnest($7::int[], $8::text[], $9::text[], $10::bytea[]) AS w (idx, channel, type, blob)
   WHERE EXISTS (SELECT 1 FROM fence)
  ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE
    SET channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob
    WHERE $11::boolean
)
SELECT EXISTS (SELECT 1 FROM fence) AS held;
