-- reseal_page_checkpoint_writes.sql
-- One page of pending writes for the re-seal, in key order after the cursor (see reseal_page_jobs.sql).
-- Params: $1 cursor (jsonb [thread_id, checkpoint_ns, checkpoint_id, task_id, idx] or NULL), $2 page size
-- Returns: the key, type and blob (base64) of up to $2 rows.
SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, type, encode(blob, 'base64') AS blob
  FROM checkpoint_writes
 WHERE $1::jsonb IS NULL
    OR (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
       > ($1::jsonb->>0, $1::jsonb->>1, $1::jsonb->>2, $1::jsonb->>3, ($1::jsonb->>4)::integer)
 ORDER BY thread_id, checkpoint_ns, checkpoint_id, task_id, idx
 LIMIT $2;
