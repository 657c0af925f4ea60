-- find_effect.sql
-- Params: $1 job_id, $2 effect_key
-- Returns: the effect row, if any.
SELECT * FROM effects WHERE job_id = $1 AND effect_key = $2;
