-- 0015_reseal_progress.sql
-- Where the background re-seal (`runledger keys rotate`, reseal.ts) stands in each table it
-- walks: the key of the last row it handled, so a stopped run resumes there, and its counts for
-- `runledger keys status`. One row per table; `target_kid` is the key it re-seals to (a run for
-- another key starts the table again). Append-only like the migrations before it.
CREATE TABLE reseal_progress (
  table_name  text PRIMARY KEY,
  target_kid  text NOT NULL,
  position    jsonb,
  walked      bigint NOT NULL DEFAULT 0,
  resealed    bigint NOT NULL DEFAULT 0,
  skipped     bigint NOT NULL DEFAULT 0,
  finished_at timestamptz,
  updated_at  timestamptz NOT NULL DEFAULT now()
);
