-- find_by_idempotency_key.sql
-- Params: $1 tenant, $2 idempotency_key
-- Returns: the job admitted under that key, if any.
SELECT * FROM jobs WHERE tenant = $1 AND idempotency_key = $2;
