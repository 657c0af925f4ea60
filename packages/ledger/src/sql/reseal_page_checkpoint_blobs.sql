-- reseal_page_checkpoint_blobs.sql
-- One page of checkpoint channel values for the re-seal, in key order after the cursor (see
-- reseal_page_jobs.sql).
-- Params: $1 cursor (jsonb [thread_id, checkpoint_ns, channel, version] or NULL), $2 page size
-- Returns: the key, type and blob (base64) of up to $2 rows.
SELECT thread_id, checkpoint_ns, channel, version, type, encode(blob, 'base64') AS blob
  FROM checkpoint_blobs
 WHERE $1::jsonb IS NULL
    OR (thread_id, checkpoint_ns, channel, version) > ($1::jsonb->>0, $1::jsonb->>1, $1::jsonb->>2, $1::jsonb->>3)
 ORDER BY thread_id, checkpoint_ns, channel, version
 LIMIT $2;
