-- list_effects.sql
-- Params: $1 job_id
-- Returns: the job's effects in the order they were first recorded.
SELECT * FROM effects WHERE job_id = $1 ORDER BY created_at, effect_key;
