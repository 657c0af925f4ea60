-- 0012_flat_at_scale.sql
-- Reads that cost the same at 10 million jobs as at none, and retention without row deletes
-- (ARCHITECTURE.md, "Cost as the ledger grows"):
--   1. thread_holder(): the claim rule "which job holds this job's thread", once, for every
--      statement that asks it (claim, refusal, job, list, waits, reconciler).
--   2. job_events partitioned by day (UTC), so a day of timeline leaves by DROP TABLE. A
--      populated table becomes the partition of everything before tomorrow, as it is: no row is
--      copied. PostgreSQL checks its rows against that bound once (a scan of job_events, which
--      holds job_events' lock for that long; jobs is not locked by this step).
--   3. ledger_counts: jobs and effects per status kept by statement triggers in the writing
--      transaction (append-only deltas, so concurrent writers never wait on one counter row),
--      folded together by the reads. Created last so jobs and effects are locked only for the
--      trigger DDL; the counts of the rows already there are seeded after the migration
--      commits (seed_ledger_counts.sql, run by migrate()), without a lock.

-- 1. ---------------------------------------------------------------------------------------
-- The job holding the thread of job ($3, seq $4) of ($1 tenant, $2 thread_id): the first earlier
-- unfinished job, or another job holding a lease; no row when the thread is free. A set-returning
-- SQL function, so PostgreSQL inlines it into the calling statement and plans it with the
-- caller's indexes (jobs_thread_open, jobs_one_active_per_thread) as if it were written there.
CREATE FUNCTION thread_holder(p_tenant text, p_thread_id text, p_job_id text, p_seq bigint)
  RETURNS TABLE (job_id text)
  LANGUAGE sql STABLE PARALLEL SAFE
  AS $$
    SELECT o.job_id FROM jobs o
     WHERE o.tenant = p_tenant AND o.thread_id = p_thread_id AND o.job_id <> p_job_id
       AND ((o.seq < p_seq AND o.status NOT IN ('completed', 'failed', 'cancelled'))
            OR o.status IN ('starting', 'running'))
     ORDER BY o.seq LIMIT 1
  $$;

-- 2. ---------------------------------------------------------------------------------------
DO $$
DECLARE
  last_id bigint;
  called boolean;
BEGIN
  EXECUTE format('SELECT last_value, is_called FROM %s', pg_get_serial_sequence('job_events', 'event_id')) INTO last_id, called;
  ALTER TABLE job_events RENAME TO job_events_before;
  -- The old identity sequence goes with the identity; the new one continues its numbers.
  ALTER TABLE job_events_before ALTER COLUMN event_id DROP IDENTITY;
  CREATE SEQUENCE job_events_event_id_seq;
  PERFORM setval('job_events_event_id_seq', last_id, called);
  CREATE TABLE job_events (
    event_id      bigint NOT NULL DEFAULT nextval('job_events_event_id_seq'),
    job_id        text NOT NULL,
    at            timestamptz NOT NULL DEFAULT clock_timestamp(),
    type          text NOT NULL,
    attempt       integer NOT NULL,
    fencing_token bigint NOT NULL,
    worker_id     text,
    detail        jsonb NOT NULL DEFAULT '{}'
  ) PARTITION BY RANGE (at);
  ALTER SEQUENCE job_events_event_id_seq OWNED BY job_events.event_id;
  IF EXISTS (SELECT 1 FROM job_events_before) THEN
    -- Everything before tomorrow (UTC) stays in the old table; daily partitions start there.
    EXECUTE format('ALTER TABLE job_events ATTACH PARTITION job_events_before FOR VALUES FROM (MINVALUE) TO (%L)',
                   date_trunc('day', now(), 'UTC') + interval '1 day');
  ELSE
    DROP TABLE job_events_before;
  END IF;
END
$$;
-- Rows whose day has no partition yet (partition upkeep stopped): never refused.
CREATE TABLE job_events_default PARTITION OF job_events DEFAULT;

-- Every partition's indexes, declared on the parent only and attached per partition, so the
-- old partition's are reused rather than rebuilt. A partitioned table cannot have a primary key
-- without its partition column: event ids come from one sequence, and the old partition keeps
-- its (job_id, event_id) primary key, which stands in for job_events_job_event there (that
-- parent index shows INVALID while the old partition exists; queries use each partition's own).
CREATE INDEX job_events_job_event ON ONLY job_events (job_id, event_id);
CREATE INDEX job_events_type_at_p ON ONLY job_events (type, at) INCLUDE (job_id, event_id);
CREATE INDEX job_events_claimed_p ON ONLY job_events (job_id, event_id) INCLUDE (at) WHERE type = 'claimed';
CREATE INDEX job_events_default_job_event ON job_events_default (job_id, event_id);
ALTER INDEX job_events_job_event ATTACH PARTITION job_events_default_job_event;
CREATE INDEX job_events_default_type_at ON job_events_default (type, at) INCLUDE (job_id, event_id);
ALTER INDEX job_events_type_at_p ATTACH PARTITION job_events_default_type_at;
CREATE INDEX job_events_default_claimed ON job_events_default (job_id, event_id) INCLUDE (at) WHERE type = 'claimed';
ALTER INDEX job_events_claimed_p ATTACH PARTITION job_events_default_claimed;
DO $$
BEGIN
  IF to_regclass('job_events_before') IS NOT NULL THEN
    ALTER INDEX job_events_type_at_p ATTACH PARTITION job_events_type_at;
    ALTER INDEX job_events_claimed_p ATTACH PARTITION job_events_claimed;
  END IF;
END
$$;

-- Creates the daily partitions of job_events (UTC days) from `days_back` days ago through
-- `days_ahead` days ahead that do not exist yet; days the old partition covers are skipped.
-- Returns how many it created. Called by the worker's retention pass
-- (ensure_job_event_partitions.sql) and below.
CREATE FUNCTION ensure_job_event_partitions(days_back integer, days_ahead integer) RETURNS integer
  LANGUAGE plpgsql AS $$
DECLARE
  day timestamptz;
  name text;
  created integer := 0;
BEGIN
  FOR d IN -days_back..days_ahead LOOP
    day := date_trunc('day', now(), 'UTC') + make_interval(days => d);
    name := 'job_events_' || to_char(day AT TIME ZONE 'UTC', 'YYYYMMDD');
    CONTINUE WHEN to_regclass(name) IS NOT NULL;
    BEGIN
      EXECUTE format('CREATE TABLE %I PARTITION OF job_events FOR VALUES FROM (%L) TO (%L)', name, day, day + interval '1 day');
      created := created + 1;
    EXCEPTION WHEN invalid_object_definition THEN
      NULL; -- overlaps the old partition: that day is already covered
    END;
  END LOOP;
  RETURN created;
END
$$;

-- Drops the partitions of job_events whose every row is older than `older_than` (their upper
-- bound is at or before now() - older_than), the old partition included once it qualifies.
-- Waits at most `wait` for the lock (a drop briefly locks job_events against writes; a long
-- reader must not make every writer queue behind it: the call then fails with 55P03 and the
-- next pass tries again). Returns the partitions dropped and their estimated rows (planner
-- statistics: counting would read what is being thrown away).
CREATE FUNCTION drop_job_event_partitions(older_than interval, wait interval)
  RETURNS TABLE (partitions integer, estimated_rows bigint)
  LANGUAGE plpgsql AS $$
DECLARE
  p record;
BEGIN
  partitions := 0;
  estimated_rows := 0;
  PERFORM set_config('lock_timeout', (extract(epoch FROM wait) * 1000)::bigint::text, true);
  FOR p IN
    SELECT c.oid::regclass AS rel, greatest(c.reltuples, 0)::bigint AS est
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = 'job_events'::regclass
       AND pg_get_expr(c.relpartbound, c.oid) <> 'DEFAULT'
       AND substring(pg_get_expr(c.relpartbound, c.oid) FROM $r$TO \('([^']+)'\)$r$)::timestamptz <= now() - older_than
  LOOP
    EXECUTE format('DROP TABLE %s', p.rel);
    partitions := partitions + 1;
    estimated_rows := estimated_rows + p.est;
  END LOOP;
  RETURN NEXT;
END
$$;

SELECT ensure_job_event_partitions(0, 7);

-- 3. ---------------------------------------------------------------------------------------
-- kind 'jobs' or 'effects'; tenant '' for effects (they have none). Any number of rows per
-- (kind, tenant, status): the count is their sum. 'unseeded' marks counts still to be seeded.
CREATE TABLE ledger_counts (
  kind   text NOT NULL,
  tenant text NOT NULL,
  status text NOT NULL,
  n      bigint NOT NULL
);

CREATE FUNCTION count_job_statuses() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO ledger_counts (kind, tenant, status, n)
    SELECT 'jobs', tenant, status, count(*) FROM new_rows GROUP BY tenant, status;
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO ledger_counts (kind, tenant, status, n)
    SELECT 'jobs', tenant, status, sum(d) FROM (
      SELECT tenant, status, -1 AS d FROM old_rows UNION ALL SELECT tenant, status, 1 FROM new_rows) x
     GROUP BY tenant, status HAVING sum(d) <> 0;
  ELSE
    INSERT INTO ledger_counts (kind, tenant, status, n)
    SELECT 'jobs', tenant, status, -count(*) FROM old_rows GROUP BY tenant, status;
  END IF;
  RETURN NULL;
END
$$;

CREATE FUNCTION count_effect_statuses() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO ledger_counts (kind, tenant, status, n)
    SELECT 'effects', '', status, count(*) FROM new_rows GROUP BY status;
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO ledger_counts (kind, tenant, status, n)
    SELECT 'effects', '', status, sum(d) FROM (
      SELECT status, -1 AS d FROM old_rows UNION ALL SELECT status, 1 FROM new_rows) x
     GROUP BY status HAVING sum(d) <> 0;
  ELSE
    INSERT INTO ledger_counts (kind, tenant, status, n)
    SELECT 'effects', '', status, -count(*) FROM old_rows GROUP BY status;
  END IF;
  RETURN NULL;
END
$$;

CREATE FUNCTION forget_counts() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM ledger_counts WHERE kind = TG_ARGV[0];
  RETURN NULL;
END
$$;

INSERT INTO ledger_counts (kind, tenant, status, n) VALUES ('unseeded', '', '', 0);

CREATE TRIGGER jobs_count_insert AFTER INSERT ON jobs REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION count_job_statuses();
CREATE TRIGGER jobs_count_update AFTER UPDATE ON jobs REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION count_job_statuses();
CREATE TRIGGER jobs_count_delete AFTER DELETE ON jobs REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION count_job_statuses();
CREATE TRIGGER jobs_count_truncate AFTER TRUNCATE ON jobs FOR EACH STATEMENT EXECUTE FUNCTION forget_counts('jobs');
CREATE TRIGGER effects_count_insert AFTER INSERT ON effects REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION count_effect_statuses();
CREATE TRIGGER effects_count_update AFTER UPDATE ON effects REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION count_effect_statuses();
CREATE TRIGGER effects_count_delete AFTER DELETE ON effects REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION count_effect_statuses();
CREATE TRIGGER effects_count_truncate AFTER TRUNCATE ON effects FOR EACH STATEMENT EXECUTE FUNCTION forget_counts('effects');

-- 4. ---------------------------------------------------------------------------------------
-- List filters served exactly by one index each, whatever the tenant's share of the ledger: the
-- single-column (graph, seq) and (status, seq) indexes leave the tenant as a filter, and when the
-- newest rows do not match (a day of echo jobs above the vacation ones) the planner walks the
-- whole seq order. On a small ledger they are built here; on a large one after the commit,
-- CONCURRENTLY (below), so jobs keeps taking writes while they build.
DO $$
BEGIN
  IF (SELECT count(*) FROM (SELECT 1 FROM jobs LIMIT 100000) x) < 100000 THEN
    CREATE INDEX jobs_tenant_graph_seq ON jobs (tenant, graph, seq);
    CREATE INDEX jobs_tenant_status_seq ON jobs (tenant, status, seq);
  END IF;
END
$$;

-- runledger:after-commit
CREATE INDEX CONCURRENTLY IF NOT EXISTS jobs_tenant_graph_seq ON jobs (tenant, graph, seq);
CREATE INDEX CONCURRENTLY IF NOT EXISTS jobs_tenant_status_seq ON jobs (tenant, status, seq);
