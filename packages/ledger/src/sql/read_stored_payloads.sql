-- read_stored_payloads.sql
-- The payload columns of one job exactly as stored (sealed envelopes stay sealed): lets a test
-- or an operator check encryption at rest without trusting the ledger's decrypting reads.
-- Params: $1 job_id
-- Returns: one row (input, result, effects: [{ effectKey, result }] by key), none when the job is missing.
SELECT j.job_id,
       j.input,
       j.result,
       coalesce((SELECT jsonb_agg(jsonb_build_object('effectKey', e.effect_key, 'result', e.result) ORDER BY e.effect_key)
                   FROM effects e
                  WHERE e.job_id = j.job_id), '[]'::jsonb) AS effects
  FROM jobs j
 WHERE j.job_id = $1;
