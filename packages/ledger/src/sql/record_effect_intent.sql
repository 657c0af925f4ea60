-- record_effect_intent.sql
-- Writes the intent (pending) right before the provider is called; a second call of an
-- effect not yet committed counts an attempt. Fenced by a share lock on the job row.
-- Params: $1 job_id, $2 fencing_token, $3 effect_key, $4 name, $5 idempotency_key
-- Returns: the effect row, or none when the lease was lost (or the effect is committed).
WITH fence AS (
  SELECT job_id FROM jobs
   -- `(status …) IS TRUE` keeps the lookup on the key (docs/decisions/0005-cost-at-scale.md, "A job's own statements find it by key").
   WHERE job_id = $1 AND fencing_token = $2 AND (status IN ('starting', 'running')) IS TRUE
     AND lease_expires_at > clock_timestamp()
     FOR SHARE
)
INSERT INTO effects (job_id, effect_key, name, status, idempotency_key, fencing_token)
SELECT job_id, $3, $4, 'pending', $5, $2 FROM fence
ON CONFLICT (job_id, effect_key) DO UPDATE
   SET status = 'pending', attempts = effects.attempts + 1, fencing_token = EXCLUDED.fencing_token,
       error = NULL, updated_at = now()
 WHERE effects.status <> 'committed'
RETURNING *;
