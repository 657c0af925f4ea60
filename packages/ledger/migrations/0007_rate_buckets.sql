-- 0007_rate_buckets.sql
-- The per-tenant rate limit's token buckets (RATE_LIMIT_PER_SECOND), one row per tenant, shared by
-- every producer process on this database, so N replicas allow the rate once, not N times.
-- UNLOGGED: a bucket is written on every limited request, and losing the table in a crash only
-- refills the buckets; it is not replicated to standbys either. Append-only like 0001–0006.
CREATE UNLOGGED TABLE rate_buckets (
  key        text PRIMARY KEY,
  tokens     double precision NOT NULL,
  -- Whether the latest take got a token (read back by take_rate_token.sql).
  taken      boolean NOT NULL,
  updated_at timestamptz NOT NULL
);
