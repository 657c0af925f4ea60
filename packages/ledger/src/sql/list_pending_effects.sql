-- list_pending_effects.sql
-- Params: $1 job_id
-- Returns: the effects of the job whose outcome is unknown.
SELECT effect_key, name FROM effects WHERE job_id = $1 AND status = 'pending' ORDER BY created_at;
