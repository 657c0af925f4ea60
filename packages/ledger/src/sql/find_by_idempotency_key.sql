-- find_by_idempotency_key.sql
-- Params: $1 tenant, $2 the key's stored forms (text[]: its digest under each configured
--         encryption key, and the plaintext, which rows admitted without encryption hold)
-- Returns: the job admitted under that key, if any (the first one, should a key rotation have let
--          the same key in twice).
SELECT * FROM jobs WHERE tenant = $1 AND idempotency_key = ANY ($2::text[]) ORDER BY seq LIMIT 1;
