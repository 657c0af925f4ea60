-- reseal_checkpoint_writes.sql
-- Swaps pending writes re-sealed with the current key (and bound to their rows) in, each only
-- if the row still holds the type and bytes that were read (compare-and-swap).
-- Params: $1 jsonb array of { key: [thread_id, checkpoint_ns, checkpoint_id, task_id, idx], old_type, old_blob, new_type, new_blob } (blobs base64)
-- Returns: one row per value swapped.
UPDATE checkpoint_writes AS t
   SET type = u.new_type, blob = decode(u.new_blob, 'base64')
  FROM jsonb_to_recordset($1::jsonb) AS u(key jsonb, old_type text, old_blob text, new_type text, new_blob text)
 WHERE t.thread_id = u.key->>0 AND t.checkpoint_ns = u.key->>1 AND t.checkpoint_id = u.key->>2
   AND t.task_id = u.key->>3 AND t.idx = (u.key->>4)::integer
   AND t.type = u.old_type AND t.blob = decode(u.old_blob, 'base64')
RETURNING 1 AS swapped;
