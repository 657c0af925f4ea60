-- 0016_count_status_changes.sql
-- ledger_counts (0012) is kept by statement triggers with transition tables. On UPDATE that cost
-- a plpgsql call and two transition tables on every statement, also the many that change no
-- status: a heartbeat, a checkpoint's fence, a progress note. The UPDATE triggers become row
-- triggers whose WHEN clause PostgreSQL evaluates without calling any function, so an update
-- that keeps the status costs nothing here and one that changes it adds its two deltas.
-- INSERT and DELETE keep their statement triggers: there one call counts a whole batch.

CREATE FUNCTION count_job_status_change() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO ledger_counts (kind, tenant, status, n)
  VALUES ('jobs', OLD.tenant, OLD.status, -1), ('jobs', NEW.tenant, NEW.status, 1);
  RETURN NULL;
END
$$;

CREATE FUNCTION count_effect_status_change() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO ledger_counts (kind, tenant, status, n)
  VALUES ('effects', '', OLD.status, -1), ('effects', '', NEW.status, 1);
  RETURN NULL;
END
$$;

DROP TRIGGER jobs_count_update ON jobs;
CREATE TRIGGER jobs_count_update AFTER UPDATE ON jobs FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.tenant IS DISTINCT FROM NEW.tenant)
  EXECUTE FUNCTION count_job_status_change();

DROP TRIGGER effects_count_update ON effects;
CREATE TRIGGER effects_count_update AFTER UPDATE ON effects FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status)
  EXECUTE FUNCTION count_effect_status_change();
