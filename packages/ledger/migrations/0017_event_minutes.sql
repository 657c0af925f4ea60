-- 0017_event_minutes.sql
-- The dashboard's "jobs entering each status" chart from counted minutes (ARCHITECTURE.md, "Cost
-- as the ledger grows"): event_minutes holds how many job_events of each type fall in each UTC
-- minute of the span [rolled_from, rolled_to) of event_minute_span. The reconciler sweep counts
-- finished minutes forward from rolled_to (roll_up_event_minutes.sql) and older history back
-- from rolled_from (backfill_event_minutes.sql), a bounded number of minutes per call; the chart
-- reads the minutes inside the span and job_events only outside it (count_events_by_bucket.sql).
-- Counted by the sweep, not by a trigger: the event insert is every job's hot path.
-- Nothing is counted here and job_events is not read: the span starts empty at the last finished
-- minute, and a populated ledger's history is backfilled by the sweep from there, one chunk per
-- call, without a lock on job_events or jobs. Append-only like the migrations before it.
CREATE TABLE event_minutes (
  type   text NOT NULL,
  minute timestamptz NOT NULL,
  n      bigint NOT NULL,
  PRIMARY KEY (type, minute) INCLUDE (n)
);

-- One row. Minutes before rolled_from or from rolled_to on are not in event_minutes (yet).
CREATE TABLE event_minute_span (
  one         boolean PRIMARY KEY DEFAULT true CHECK (one),
  rolled_from timestamptz NOT NULL,
  rolled_to   timestamptz NOT NULL CHECK (rolled_to >= rolled_from)
);
INSERT INTO event_minute_span (rolled_from, rolled_to) SELECT m, m FROM date_trunc('minute', now() - interval '1 minute', 'UTC') AS m;
