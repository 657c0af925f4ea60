-- read_stored_payloads.sql
-- The payload columns of one job exactly as stored (sealed envelopes stay sealed): lets a test
-- or an operator check encryption at rest without trusting the ledger's decrypting reads.
-- Params: $1 job_id
-- Returns: one row (input, result, interrupt, resume_value, event_details: every event's detail
--   in order, effects: [{ effectKey, result }] by key, checkpoints: the
--   stored type and bytes (as escaped text) of every non-empty channel blob and pending write
--   of the job's LangGraph thread), none when the job is missing.
SELECT j.job_id,
       j.input,
       j.result,
       j.interrupt,
       j.resume_value,
       coalesce((SELECT jsonb_agg(ev.detail ORDER BY ev.event_id) FROM job_events ev WHERE ev.job_id = j.job_id), '[]'::jsonb) AS event_details,
       coalesce((SELECT jsonb_agg(jsonb_build_object('effectKey', e.effect_key, 'result', e.result) ORDER BY e.effect_key)
                   FROM effects e
                  WHERE e.job_id = j.job_id), '[]'::jsonb) AS effects,
       coalesce((SELECT jsonb_agg(jsonb_build_object('type', c.type, 'bytes', encode(c.blob, 'escape')))
                   FROM (SELECT type, blob FROM checkpoint_blobs WHERE thread_id = langgraph_thread_id(j.tenant, j.thread_id) AND blob IS NOT NULL
                         UNION ALL
                         SELECT type, blob FROM checkpoint_writes WHERE thread_id = langgraph_thread_id(j.tenant, j.thread_id)) c), '[]'::jsonb) AS checkpoints
  FROM jobs j
 WHERE j.job_id = $1;
