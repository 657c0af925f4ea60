-- settle_effect.sql
-- Records the provider's answer: committed with its result, or failed with its error.
-- Fenced like every worker write.
-- Params: $1 job_id, $2 fencing_token, $3 effect_key, $4 status ('committed' | 'failed'), $5 result, $6 error
-- Returns: the effect row, or none when the lease was lost.
WITH fence AS (
  SELECT job_id FROM jobs
   -- `(status …) IS TRUE` keeps the lookup on the key (docs/decisions/0005-cost-at-scale.md, "A job's own statements find it by key").
   WHERE job_id = $1 AND fencing_token = $2 AND (status IN ('starting', 'running')) IS TRUE
     AND lease_expires_at > clock_timestamp()
     FOR SHARE
)
UPDATE effects e
   SET status = $4, result = $5, error = $6, fencing_token = $2, updated_at = now()
  FROM fence
 WHERE e.job_id = fence.job_id AND e.effect_key = $3 AND e.status <> 'committed'
RETURNING e.*;
