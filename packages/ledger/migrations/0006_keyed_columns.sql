-- 0006_keyed_columns.sql
-- With encryption at rest on, `jobs.idempotency_key` holds a keyed digest of the key (HMAC:
-- lookups need equality, which a sealed value with a fresh nonce cannot give), so the key a
-- client sent is kept here as well, sealed like the input, for the readers the API, the CLI and
-- the dashboard show it to. NULL when encryption is off (the key column is then the plaintext)
-- and for rows admitted before this migration. Append-only like 0001–0005; adding a nullable
-- column without a default rewrites nothing.
ALTER TABLE jobs ADD COLUMN idempotency_key_sealed jsonb;
