-- 0010_scheduling.sql
-- Scheduling through the ledger: a job's priority (its due time is the existing `run_after`),
-- cron definitions with one row per scheduled time they handled, and per-graph rate limits
-- shared by every worker. Append-only like 0001–0008.

-- Lower runs first, as in BullMQ (1 before 10); 0 = no priority, served before any prioritized
-- job (BullMQ's wait list). A constant default adds the column without rewriting the table.
ALTER TABLE jobs ADD COLUMN priority integer NOT NULL DEFAULT 0 CONSTRAINT jobs_priority_range CHECK (priority BETWEEN 0 AND 1000);

CREATE TABLE crons (
  cron_id      text PRIMARY KEY,
  tenant       text NOT NULL DEFAULT 'default',
  graph        text NOT NULL,
  schedule     text NOT NULL,
  timezone     text NOT NULL DEFAULT 'UTC',
  input        jsonb,
  -- null: every firing starts a new thread (named after its job); else every firing is a turn of this thread.
  thread_id    text,
  metadata     jsonb NOT NULL DEFAULT '{}',
  -- After an outage: 'run-once' admits the latest missed time and records the others as missed;
  -- 'skip' records them all as missed.
  missed       text NOT NULL DEFAULT 'run-once' CHECK (missed IN ('run-once', 'skip')),
  enabled      boolean NOT NULL DEFAULT true,
  -- The earliest scheduled time not yet handled; a firing pass advances it in the same transaction.
  next_fire_at timestamptz NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX crons_due ON crons (next_fire_at) WHERE enabled;
CREATE INDEX crons_tenant ON crons (tenant, created_at);

-- Every scheduled time a cron handled, once: admitted on time, admitted late (`caught_up`, the
-- run-once policy), or `missed` (not run, with the reason in the outcome). The key is what makes
-- a firing happen once whatever the number of producers.
CREATE TABLE cron_firings (
  cron_id      text NOT NULL REFERENCES crons (cron_id) ON DELETE CASCADE,
  scheduled_at timestamptz NOT NULL,
  outcome      text NOT NULL CHECK (outcome IN ('admitted', 'caught_up', 'missed')),
  job_id       text,
  recorded_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (cron_id, scheduled_at)
);

-- Per-graph limits for model-provider quotas: at most `max_per_interval` claims in any window of
-- `interval_ms`, and at most `max_concurrent` leased jobs of the graph across the fleet.
-- `recent_claims` holds the times of the latest claims (at most max_per_interval of them).
CREATE TABLE graph_limits (
  graph            text PRIMARY KEY,
  max_per_interval integer CHECK (max_per_interval > 0),
  interval_ms      integer CHECK (interval_ms > 0),
  max_concurrent   integer CHECK (max_concurrent > 0),
  recent_claims    timestamptz[] NOT NULL DEFAULT '{}',
  updated_at       timestamptz NOT NULL DEFAULT now(),
  CHECK ((max_per_interval IS NULL) = (interval_ms IS NULL))
);
