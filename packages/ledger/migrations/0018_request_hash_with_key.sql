-- 0018_request_hash_with_key.sql
-- The request fingerprint is read only to answer a repeated idempotency key (the same request is
-- the same job, another one a conflict), so an admission without a key no longer computes or
-- stores one: request_hash is null on those rows. Its canonical JSON and SHA-256 were about a
-- sixth of the ledger client's CPU per admission (bench/bulk-admission.ts, profiled). Dropping
-- NOT NULL changes only the catalog: no rewrite, no scan, a brief lock. Append-only like the
-- migrations before it.
ALTER TABLE jobs ALTER COLUMN request_hash DROP NOT NULL;
